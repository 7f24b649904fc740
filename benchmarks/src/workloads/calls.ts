/**
 * The calls a product run sends (`sandfleet bench step|closed|open --workload …`), each with what
 * it must answer: the built-in snippets, the seeded RL mix (rl-math-corpus.ts) and the realistic
 * RL step built on it (long calls and time-outs in shares of its own), or a user's JSONL
 * of `{code, stdin?, expect?}`. Every answer is checked against its call's expectation.
 */
import { readFileSync } from 'node:fs'
import { HOSTILE_CALLS, type HostileCall } from './hostile-calls.ts'
import { TAMPER_CALLS } from './tamper-calls.ts'
import { RL_MATH_CORPUS, type CorpusCall } from './rl-math-corpus.ts'
import { seededRandom } from '@sandfleet/trainer'
import { LIMITS } from '@sandfleet/protocol'

/** One tool call and the answer it must get. */
export interface BenchCall {
  code: string
  stdin?: string
  timeoutMs?: number
  /** The status it must come back with (default `ok`). */
  status: string
  /** Other statuses that are right too (hostile code whose end is a race: a deadline or a limit). */
  accept?: readonly string[]
  /** The stdout it must come back with; undefined: not checked. */
  stdout?: string
  /** Its class in the report's latency by class (default: `timeout` for a call that must time out, else `short`). */
  kind?: CallClass
}

/** The classes of calls a report gives latencies for: the mix's ordinary calls, the long ones, the time-outs. */
export type CallClass = 'short' | 'long' | 'timeout'

/** A call's class. */
export function classOf(call: BenchCall): CallClass {
  return call.kind ?? (call.status === 'timeout' ? 'timeout' : 'short')
}

/** The built-in workloads and the user's file. */
export const WORKLOADS = ['trivial', 'sympy', 'sleep', 'rl-mix', 'rl-step', 'rl-hostile', 'rl-tamper', 'jsonl'] as const
/** A workload's name. */
export type WorkloadName = (typeof WORKLOADS)[number]

/** What draws the calls. */
export interface WorkloadSpec {
  name: WorkloadName
  /** Seed of the RL mix's draw (the same seed, the same calls in the same order). */
  seed: number
  /** Seconds each call of `sleep` sleeps (default 0.3: rStar2-Agent's typical tool call). */
  sleepS: number
  /** The user's JSONL file (`jsonl`). */
  file?: string
  /** Share of `rl-hostile`'s (`rl-tamper`'s) calls drawn from the hostile (tampering) calls (default 0.05). */
  hostileShare?: number
  /** `rl-step`: its long calls and its time-outs ({@link RL_STEP_DEFAULTS}). */
  step?: Partial<RlStepShape>
}

/** The shape of the `rl-step` workload: the RL mix with a share of long calls and a share of time-outs. */
export interface RlStepShape {
  /** Share of the calls that run until their deadline. */
  timeoutShare: number
  /** A time-out's `timeout_ms`; 0: the runaway calls' own (the corpus's, 300 ms). */
  timeoutMs: number
  /** Share of the calls that compute for `longMs` of CPU and answer `ok`. */
  longShare: number
  /** CPU milliseconds a long call computes. */
  longMs: number
}

/** `rl-step`'s defaults: 3 % time-outs at their own `timeout_ms`, 2 % long calls of 1 s of CPU. */
export const RL_STEP_DEFAULTS: Readonly<RlStepShape> = {
  timeoutShare: 0.03,
  timeoutMs: 0,
  longShare: 0.02,
  longMs: 1000
}

/**
 * A long call: `ms` of its own CPU (the process's, so a reuse process's earlier jobs do not
 * shorten it), then `long done`. Its deadline leaves it room on a busy fleet: 20 × its CPU, at
 * least 30 s, within the contract's largest `timeout_ms`.
 */
export function longCall(ms: number): BenchCall {
  return {
    code: `import time\nend = time.process_time() + ${ms / 1000}\nwhile time.process_time() < end:\n    pass\nprint('long done')`,
    status: 'ok',
    stdout: 'long done\n',
    timeoutMs: Math.min(LIMITS.maxTimeoutMs, Math.max(30_000, 20 * ms)),
    kind: 'long'
  }
}

/**
 * `n` calls of a realistic RL step, drawn with `seed`: the RL mix's calls that end on their own,
 * with a `timeoutShare` of them replaced by the corpus's runaway calls (at their own `timeout_ms`,
 * or `timeoutMs`) and a `longShare` by {@link longCall}s.
 */
export function rlStep(n: number, seed: number, shape: Partial<RlStepShape> = {}): BenchCall[] {
  const s = { ...RL_STEP_DEFAULTS, ...shape }
  const random = seededRandom(seed ^ 0x2545f491)
  const finite = RL_MATH_CORPUS.filter((c) => c.status !== 'timeout')
  const runaways = RL_MATH_CORPUS.filter((c) => c.status === 'timeout')
    .map(fromCorpus)
    .map((c) => (s.timeoutMs > 0 ? { ...c, timeoutMs: s.timeoutMs } : c))
  const long = longCall(s.longMs)
  return rlMix(n, seed, finite).map((c) => {
    const x = random()
    if (x < s.timeoutShare) return runaways[Math.floor(random() * runaways.length)]
    if (x < s.timeoutShare + s.longShare) return long
    return c
  })
}

function fromCorpus(c: CorpusCall): BenchCall {
  return {
    code: c.code,
    status: c.status,
    stdout: c.stdout,
    ...(c.timeoutMs === undefined ? {} : { timeoutMs: c.timeoutMs })
  }
}

/** `n` calls of the RL mix drawn with `seed`, each corpus call as often as its weight says. */
export function rlMix(n: number, seed: number, corpus: readonly CorpusCall[] = RL_MATH_CORPUS): BenchCall[] {
  const random = seededRandom(seed)
  const total = corpus.reduce((s, c) => s + c.weight, 0)
  const cumulative: number[] = []
  let acc = 0
  for (const c of corpus) {
    acc += c.weight
    cumulative.push(acc)
  }
  const calls = corpus.map(fromCorpus)
  const out: BenchCall[] = []
  for (let i = 0; i < n; i++) {
    const x = random() * total
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cumulative[mid] > x) hi = mid
      else lo = mid + 1
    }
    out.push(calls[lo])
  }
  return out
}

/**
 * `n` calls of the RL mix with a `share` of them replaced by calls of `among` (the hostile calls), drawn with `seed`.
 */
export function rlHostile(
  n: number,
  seed: number,
  share: number,
  among: readonly HostileCall[] = HOSTILE_CALLS
): BenchCall[] {
  const random = seededRandom(seed ^ 0x5bd1e995)
  return rlMix(n, seed).map((c) => (random() < share ? among[Math.floor(random() * among.length)] : c))
}

/**
 * A user's JSONL: one `{code, stdin?, timeout_ms?, expect?}` a line, `expect` being an expected
 * stdout string or `{status?, stdout?}`. Throws naming the line of the first bad one.
 */
export function parseJsonl(text: string, where = 'JSONL'): BenchCall[] {
  const out: BenchCall[] = []
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return
    let v: any
    try {
      v = JSON.parse(line)
    } catch {
      throw new Error(`${where}:${i + 1}: not JSON`)
    }
    if (typeof v?.code !== 'string') throw new Error(`${where}:${i + 1}: needs "code" (a string)`)
    if (v.stdin !== undefined && typeof v.stdin !== 'string')
      throw new Error(`${where}:${i + 1}: "stdin" must be a string`)
    if (v.timeout_ms !== undefined && !(Number.isInteger(v.timeout_ms) && v.timeout_ms > 0))
      throw new Error(`${where}:${i + 1}: "timeout_ms" must be a positive integer`)
    const expect = typeof v.expect === 'string' ? { stdout: v.expect } : (v.expect ?? {})
    if (
      typeof expect !== 'object' ||
      (expect.stdout !== undefined && typeof expect.stdout !== 'string') ||
      (expect.status !== undefined && typeof expect.status !== 'string')
    ) {
      throw new Error(`${where}:${i + 1}: "expect" must be a stdout string or {status?, stdout?}`)
    }
    out.push({
      code: v.code,
      status: expect.status ?? 'ok',
      ...(v.stdin === undefined ? {} : { stdin: v.stdin }),
      ...(v.timeout_ms === undefined ? {} : { timeoutMs: v.timeout_ms }),
      ...(expect.stdout === undefined ? {} : { stdout: expect.stdout })
    })
  })
  if (out.length === 0) throw new Error(`${where}: no calls`)
  return out
}

/** `n` calls of the workload (a file's calls are repeated in order to make `n`). */
export function drawCalls(spec: WorkloadSpec, n: number): BenchCall[] {
  const repeat = (calls: readonly BenchCall[]): BenchCall[] =>
    Array.from({ length: n }, (_, i) => calls[i % calls.length])
  switch (spec.name) {
    case 'trivial':
      return repeat([{ code: 'print(1+1)', status: 'ok', stdout: '2\n' }])
    case 'sympy':
      return repeat([
        {
          code: "import sympy\nx = sympy.symbols('x')\nprint(sympy.factor(x**4 - 1))",
          status: 'ok',
          stdout: '(x - 1)*(x + 1)*(x**2 + 1)\n'
        }
      ])
    case 'sleep':
      return repeat([
        { code: `import time\ntime.sleep(${spec.sleepS})\nprint('slept')`, status: 'ok', stdout: 'slept\n' }
      ])
    case 'rl-mix':
      return rlMix(n, spec.seed)
    case 'rl-step':
      return rlStep(n, spec.seed, spec.step)
    case 'rl-hostile':
      return rlHostile(n, spec.seed, spec.hostileShare ?? 0.05)
    case 'rl-tamper':
      return rlHostile(n, spec.seed, spec.hostileShare ?? 0.05, TAMPER_CALLS)
    case 'jsonl': {
      if (spec.file === undefined) throw new Error('--workload jsonl needs --file PATH')
      return repeat(parseJsonl(readFileSync(spec.file, 'utf8'), spec.file))
    }
  }
}

/** A one-line description of the workload, for the report. */
export function describeWorkload(spec: WorkloadSpec): string {
  switch (spec.name) {
    case 'trivial':
      return 'print(1+1)'
    case 'sympy':
      return 'sympy.factor(x**4-1)'
    case 'sleep':
      return `time.sleep(${spec.sleepS}) then print`
    case 'rl-mix':
      return `RL mix of ${RL_MATH_CORPUS.length} math tool calls (sympy, numpy, fractions; some errors, a few timeouts), seed ${spec.seed}`
    case 'rl-step': {
      const s = { ...RL_STEP_DEFAULTS, ...spec.step }
      const pct = (x: number): string => `${Math.round(x * 1000) / 10} %`
      return `realistic RL step: the RL mix's calls that end on their own, ${pct(s.timeoutShare)} time-outs (${s.timeoutMs > 0 ? `timeout_ms ${s.timeoutMs}` : 'at their own timeout_ms'}), ${pct(s.longShare)} long calls of ${s.longMs} ms of CPU, seed ${spec.seed}`
    }
    case 'rl-hostile':
      return `RL mix with ${Math.round((spec.hostileShare ?? 0.05) * 100)} % of ${HOSTILE_CALLS.length} hostile calls (bombs, floods, signals, escapes, pollution), seed ${spec.seed}`
    case 'rl-tamper':
      return `RL mix with ${Math.round((spec.hostileShare ?? 0.05) * 100)} % of ${TAMPER_CALLS.length} tampering calls (forged frames, C and module state changed), seed ${spec.seed}`
    case 'jsonl':
      return `calls of ${spec.file ?? '?'}`
  }
}
