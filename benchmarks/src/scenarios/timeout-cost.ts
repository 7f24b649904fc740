/**
 * What a timeout costs, on a fleet of one sandbox (so that nothing else can answer): `repeats`
 * rounds of a call that runs until its deadline (`while True: pass`, `timeout_ms` 300), each
 * followed at once by `print(1+1)`:
 * - the time from the timeout's answer to the next call's, and whether the same sandbox gave it
 *   (a timeout costs the job, not the sandbox);
 * - the CPU a timeout costs beyond its own run: the fleet's CPU (its process tree, from before the
 *   first round until the tree is idle again after the last, so that a replacement's warm-up
 *   falls in it) less the calls' own (`cpu_ms`), over those rounds, against the same over rounds
 *   of a call that computes as long and ends by itself (a loop until 300 ms have passed); their
 *   difference per round;
 * - the sandboxes replaced meanwhile, by reason (the runner's /metrics).
 * With `--url` only the times and whether the sandbox was kept.
 */
import { request } from 'undici'
import { settle } from '../cpu.ts'
import { existingServer, type Server } from '../fleet.ts'
import { startFleetCpuMeter } from '../fleet-cpu.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { replacementCounters, replacementsMoved } from '../run/replacement-counters.ts'
import { summarize } from '../stats.ts'
import { fleetNote, serveArgs, type BenchContext, type Scenario } from './context.ts'

interface Result {
  status?: string
  stdout?: string
  sandbox?: string
  cpu_ms?: number
}

async function execute(url: string, body: unknown): Promise<Result> {
  const res = await request(`${url}/v1/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`/v1/execute answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`)
  return JSON.parse(text) as Result
}

/** Sum and count of the replacement-time histogram over every label set. */
export async function replaceMetric(url: string): Promise<{ sum: number; count: number }> {
  const res = await request(`${url}/metrics`)
  const text = await res.body.text()
  let sum = 0
  let count = 0
  for (const line of text.split('\n')) {
    const m = /^sandfleet_runner_sandbox_replace_seconds_(sum|count)(?:\{[^}]*\})? ([\d.eE+-]+)$/.exec(line)
    if (m === null) continue
    if (m[1] === 'sum') sum += Number(m[2])
    else count += Number(m[2])
  }
  return { sum, count }
}

/** Its deadline, and how long the call that ends by itself computes. */
const RUN_MS = 300
/** Runs until its deadline. */
const SPIN = { code: 'while True: pass', timeout_ms: RUN_MS }
/** Computes as long, and ends by itself. */
const BUSY = {
  code: `import time\nend = time.time() + ${RUN_MS / 1000}\nwhile time.time() < end:\n    pass\nprint('done')`,
  timeout_ms: 10 * RUN_MS
}
const PROBE = { code: 'print(1+1)' }

/** What a block of rounds measured. */
interface Block {
  /** The next call's answer after each first call's, s. */
  gaps: number[]
  /** Rounds whose next call the same sandbox answered. */
  kept: number
  /** The fleet's CPU over the block, ms (undefined: not measured). */
  fleetMs: number | undefined
  /** The calls' own CPU (their `cpu_ms`), ms. */
  ownMs: number
  problems: string[]
}

/** `rounds` rounds of `first` then the probe; the fleet's CPU measured when `pid` is known. */
async function block(
  url: string,
  pid: number | undefined,
  rounds: number,
  first: typeof SPIN,
  status: string
): Promise<Block> {
  const meter = pid === undefined ? undefined : startFleetCpuMeter({ pids: [pid] })
  const out: Block = { gaps: [], kept: 0, fleetMs: undefined, ownMs: 0, problems: [] }
  for (let i = 0; i < rounds; i++) {
    const a = await execute(url, first)
    const t0 = performance.now()
    const b = await execute(url, PROBE)
    const gap = (performance.now() - t0) / 1000
    out.ownMs += (a.cpu_ms ?? 0) + (b.cpu_ms ?? 0)
    if (a.status !== status) {
      out.problems.push(`round ${i}: ${first.code.split('\n')[0]} answered ${a.status ?? '?'}, not ${status}`)
      continue
    }
    if (b.status !== 'ok' || b.stdout !== '2\n') {
      out.problems.push(`round ${i}: the call after it answered ${b.status ?? '?'}`)
      continue
    }
    out.gaps.push(gap)
    if (b.sandbox === a.sandbox) out.kept++
  }
  if (pid !== undefined && meter !== undefined) {
    // Until the tree is idle: a replacement started by the last round is paid inside the block.
    await settle(pid, 60_000, 5, false)
    out.fleetMs = (await meter.stop()).totalMs
  }
  return out
}

/** The scenario. */
export const timeoutCost: Scenario = {
  summary:
    'what a timeout costs on a pool of one: its sandbox kept, the next call answered ≤ 0.5 s after it, ≤ 20 ms of CPU beyond its own run',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const own = ctx.options.url === undefined
    const server: Server = own
      ? await ctx.startFleet(serveArgs(ctx.options, 1))
      : existingServer(ctx.options.url as string)
    const rounds = ctx.options.repeats
    const pid = own ? server.pid : undefined
    try {
      if (pid !== undefined) ctx.log(`  settled after ${await settle(pid)} ms`)
      ctx.log(
        `  ${rounds} timeouts, then ${rounds} calls that end by themselves, on ${server.url}${own ? ' (pool size 1)' : ''}`
      )
      const before = await replacementCounters([server.url])
      const spins = await block(server.url, pid, rounds, SPIN, 'timeout')
      const replaced =
        before === undefined
          ? undefined
          : replacementsMoved(before, (await replacementCounters([server.url])) ?? new Map())
      const busy = await block(server.url, pid, rounds, BUSY, 'ok')
      const s = summarize(spins.gaps)
      const figures: Figure[] = [
        {
          scenario: 'timeout-cost',
          name: `timeout result → next call answered, max of ${s.n}`,
          value: s.max,
          unit: 's',
          target: { op: '<=', value: 0.5 }
        },
        {
          scenario: 'timeout-cost',
          name: `timeout result → next call answered, p50 of ${s.n}`,
          value: s.p50,
          unit: 's'
        },
        {
          scenario: 'timeout-cost',
          name: `rounds whose next call the sandbox that timed out answered, of ${rounds}`,
          value: spins.kept,
          unit: 'rounds',
          target: { op: '>=', value: rounds }
        }
      ]
      if (spins.fleetMs !== undefined && busy.fleetMs !== undefined) {
        figures.push(
          {
            scenario: 'timeout-cost',
            name: "CPU a timeout costs beyond its own run (fleet CPU less the calls' own, a timeout's round less a round of a call that ends by itself)",
            value: (spins.fleetMs - spins.ownMs - (busy.fleetMs - busy.ownMs)) / rounds,
            unit: 'ms',
            target: { op: '<=', value: 20 }
          },
          {
            scenario: 'timeout-cost',
            name: "the same, the calls' own CPU not taken out (fleet CPU of a timeout's round less a round of a call that ends by itself)",
            value: (spins.fleetMs - busy.fleetMs) / rounds,
            unit: 'ms'
          },
          {
            scenario: 'timeout-cost',
            name: 'fleet CPU of a round: a timeout and the next call',
            value: spins.fleetMs / rounds,
            unit: 'ms'
          },
          {
            scenario: 'timeout-cost',
            name: "of which the calls' own (cpu_ms)",
            value: spins.ownMs / rounds,
            unit: 'ms'
          }
        )
      }
      const moved =
        replaced === undefined
          ? 'not read (no /metrics)'
          : Object.entries(replaced)
              .map(([k, n]) => `${k} ${n}`)
              .join(', ') || 'none'
      return {
        figures,
        runs: [],
        notes: [
          fleetNote(server),
          `timeout-cost: sandboxes replaced over the ${rounds} timeouts, by reason: ${moved}`,
          ...[...spins.problems, ...busy.problems].map((p) => `timeout-cost: ${p}`)
        ]
      }
    } finally {
      if (own) await server.close()
    }
  }
}
