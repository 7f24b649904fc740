/**
 * Rollout scheduler simulation: agentic multi-turn rollouts with long-tailed turn lengths over
 * several simulated vLLM-like engines, scheduled by free KV capacity (`kv`, the trainer's
 * `EnginePicker` as `KvScheduler` uses it), `round_robin` and `least_requests`. Figures:
 * makespan, generated tokens/s, KV preemptions (evictions) and the tokens recomputed after them,
 * trajectory completion p50/p99. A discrete-event simulation: no GPU, deterministic per seed, so
 * its figures do not depend on what else the machine runs.
 *
 * The engine model: every step decodes one token for each running sequence and prefills what was
 * admitted (step = base + per-sequence + per-prefill-token cost); a waiting sequence is admitted
 * when its tokens fit in the KV cache now (vLLM admits by current usage, not by max length); when
 * decoding outgrows the cache, the most recently admitted sequence is preempted and recomputed
 * later (vLLM's recompute preemption). Each turn is a new generation request (context + new
 * tokens); tool calls between turns take a long-tailed time.
 *
 * Usage: node --import tsx benchmarks/src/rollout-scheduler-sim.ts [--engines 4] [--capacity 65536]
 *        [--trajectories 512] [--seeds 1,2,3] [--max-tokens-per-turn 4096] [--budget 8192]
 */
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { EnginePicker, seededRandom, type EngineSlot, type SchedulePolicy } from '@sandfleet/trainer'
import { gitCommit } from './environment.ts'

/** Parameters of one simulation. */
export interface SimParams {
  engines: number
  /** KV cache per engine, tokens. */
  capacityTokens: number
  trajectories: number
  seed: number
  maxTokensPerTurn: number
  /** Response budget per trajectory (model + tool tokens). */
  budget: number
  /** Most running sequences per engine (vLLM max_num_seqs). */
  maxSeqs: number
  /** Step cost: base ms, ms per running sequence, ms per prefilled token. */
  stepBaseMs: number
  stepPerSeqMs: number
  stepPerPrefillTokenMs: number
  /** Engines keep finished sequences' KV as a prefix cache in their free blocks (vLLM's automatic prefix caching). */
  prefixCache: boolean
}

/** Defaults: 4 engines of 64k tokens, 512 trajectories, turns of median 400 tokens with a long tail. */
export const DEFAULT_SIM: SimParams = { engines: 4, capacityTokens: 65_536, trajectories: 512, seed: 1, maxTokensPerTurn: 4096, budget: 8192, maxSeqs: 256, stepBaseMs: 10, stepPerSeqMs: 0.06, stepPerPrefillTokenMs: 0.01, prefixCache: true }

/** A scheduler under test: a policy and, for `kv`, how much it reserves and whether it reads usage. */
export interface SimVariant {
  name: string
  policy: SchedulePolicy
  /** New tokens reserved per generation (default its max tokens: the report's max-length estimate). */
  reserveNewTokens?: number
  /** The picker also sees each engine's KV tokens in use (its metrics, refreshed every step). */
  reportUsage?: boolean
  /** Every turn of a trajectory goes to the engine its first turn went to (static assignment). */
  sticky?: boolean
  /** `kv` prefers the engine of the trajectory's previous turn when it has room (its prefix cache). */
  affinity?: boolean
}

/** Figures of one run. */
export interface SimResult {
  variant: string
  makespanS: number
  tokensPerS: number
  generatedTokens: number
  evictions: number
  recomputedTokens: number
  /** Prompt tokens served from the prefix cache over all prompt tokens admitted. */
  prefixHitRate: number
  trajectoryP50S: number
  trajectoryP99S: number
  /** Busiest engine's busy time over the mean: 1 is perfect balance. */
  imbalance: number
}

interface Turn { length: number, toolTokens: number, toolMs: number }
interface Traj { prompt: number, turns: Turn[], turn: number, context: number, response: number, doneAt: number, engine: number, lastEngine: number }
interface Seq { traj: Traj, engine: number, target: number, generated: number, need: number, preempted: boolean }
interface EngineState { running: Seq[], waiting: Seq[], used: number, busy: boolean, busyMs: number, cache: Map<Traj, number>, cached: number }

function lognormal (random: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, random())
  const v = random()
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))
}

/** The workload: prompts of 200–800 tokens, 1–8 turns, turn lengths lognormal (median 400, σ 1.2). */
export function makeTrajectories (p: SimParams): Traj[] {
  const random = seededRandom(p.seed)
  return Array.from({ length: p.trajectories }, () => {
    const nTurns = Math.min(8, 1 + Math.floor(-Math.log(Math.max(1e-12, random())) * 2))
    const turns = Array.from({ length: nTurns }, () => ({
      length: Math.max(8, Math.min(p.maxTokensPerTurn, Math.round(lognormal(random, 400, 1.2)))),
      toolTokens: 20 + Math.floor(random() * 280),
      toolMs: Math.min(10_000, lognormal(random, 100, 1))
    }))
    return { prompt: 200 + Math.floor(random() * 600), turns, turn: 0, context: 0, response: 0, doneAt: 0, engine: -1, lastEngine: -1 }
  })
}

class Heap<T> {
  private readonly items: Array<{ t: number, n: number, v: T }> = []
  private n = 0
  get size (): number { return this.items.length }
  push (t: number, v: T): void {
    const a = this.items
    a.push({ t, n: this.n++, v })
    let i = a.length - 1
    while (i > 0) { const p = (i - 1) >> 1; if (this.less(a[p], a[i])) break; [a[p], a[i]] = [a[i], a[p]]; i = p }
  }
  pop (): { t: number, v: T } {
    const a = this.items
    const top = a[0]
    const last = a.pop() as typeof top
    if (a.length > 0) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1; const r = l + 1; let m = i
        if (l < a.length && this.less(a[l], a[m])) m = l
        if (r < a.length && this.less(a[r], a[m])) m = r
        if (m === i) break
        ;[a[m], a[i]] = [a[i], a[m]]; i = m
      }
    }
    return top
  }
  private less (a: { t: number, n: number }, b: { t: number, n: number }): boolean { return a.t < b.t || (a.t === b.t && a.n < b.n) }
}

type Event = { kind: 'arrive', traj: Traj } | { kind: 'step', engine: number, prefilled: number }

/** Runs one policy over the workload of `p.seed`. */
export function simulate (p: SimParams, variant: SimVariant): SimResult {
  const trajs = makeTrajectories(p)
  const picker = new EnginePicker(variant.policy)
  const slots: EngineSlot[] = Array.from({ length: p.engines }, () => ({ capacityTokens: p.capacityTokens, reservedTokens: 0, inFlight: 0 }))
  const engines: EngineState[] = Array.from({ length: p.engines }, () => ({ running: [], waiting: [], used: 0, busy: false, busyMs: 0, cache: new Map<Traj, number>(), cached: 0 }))
  const central: Seq[] = []
  const events = new Heap<Event>()
  let now = 0
  let generated = 0
  let evictions = 0
  let recomputed = 0
  let promptTokens = 0
  let hitTokens = 0

  /** Evicts the least recently cached prefixes until cache and running sequences fit. */
  const makeRoom = (e: EngineState): void => {
    for (const [t, n] of e.cache) {
      if (e.used + e.cached <= p.capacityTokens) break
      e.cache.delete(t)
      e.cached -= n
    }
  }
  const toCache = (e: EngineState, t: Traj, tokens: number): void => {
    if (!p.prefixCache) return
    const old = e.cache.get(t)
    if (old !== undefined) { e.cache.delete(t); e.cached -= old }
    e.cache.set(t, tokens)
    e.cached += tokens
    makeRoom(e)
  }

  const startStep = (i: number): void => {
    const e = engines[i]
    let prefill = 0
    while (e.waiting.length > 0 && e.running.length < p.maxSeqs) {
      const s = e.waiting[0]
      const tokens = s.traj.context + s.generated
      if (e.used + tokens > p.capacityTokens && e.running.length > 0) break
      e.waiting.shift()
      e.running.push(s)
      const hit = Math.min(tokens, e.cache.get(s.traj) ?? 0)
      if (e.cache.has(s.traj)) { e.cached -= e.cache.get(s.traj) as number; e.cache.delete(s.traj) }
      e.used += tokens
      makeRoom(e)
      prefill += tokens - hit
      promptTokens += tokens
      hitTokens += hit
      if (s.preempted) recomputed += tokens - hit
    }
    if (variant.reportUsage) slots[i].usedTokens = e.used + e.waiting.reduce((a, w) => a + w.traj.context + w.generated, 0)
    if (e.running.length === 0) { e.busy = false; return }
    e.busy = true
    const dt = p.stepBaseMs + p.stepPerSeqMs * e.running.length + p.stepPerPrefillTokenMs * prefill
    e.busyMs += dt
    events.push(now + dt, { kind: 'step', engine: i, prefilled: prefill })
  }
  const place = (s: Seq, i: number): void => {
    s.engine = i
    s.traj.lastEngine = i
    slots[i].reservedTokens += s.need
    slots[i].inFlight++
    engines[i].waiting.push(s)
    if (!engines[i].busy) startStep(i)
  }
  const dispatch = (s: Seq): void => {
    if (variant.sticky && s.traj.engine >= 0) { place(s, s.traj.engine); return }
    const i = central.length === 0 ? picker.pick(slots, s.need, variant.affinity && s.traj.lastEngine >= 0 ? s.traj.lastEngine : undefined) : undefined
    if (variant.sticky && i !== undefined) s.traj.engine = i
    if (i === undefined) central.push(s)
    else place(s, i)
  }
  const arrive = (t: Traj): void => {
    const maxTokens = Math.min(p.maxTokensPerTurn, p.budget - t.response)
    const target = Math.min(maxTokens, t.turns[t.turn].length)
    dispatch({ traj: t, engine: -1, target, generated: 0, need: t.context + Math.min(maxTokens, variant.reserveNewTokens ?? maxTokens), preempted: false })
  }
  const finishTurn = (s: Seq): void => {
    const t = s.traj
    slots[s.engine].reservedTokens -= s.need
    slots[s.engine].inFlight--
    t.context += s.generated
    t.response += s.generated
    const turn = t.turns[t.turn]
    t.turn++
    if (t.turn < t.turns.length && t.response + turn.toolTokens < p.budget - 8) {
      t.context += turn.toolTokens
      t.response += turn.toolTokens
      events.push(now + turn.toolMs, { kind: 'arrive', traj: t })
    } else t.doneAt = now
    while (central.length > 0) {
      const head = central[0]
      const i = picker.pick(slots, head.need, variant.affinity && head.traj.lastEngine >= 0 ? head.traj.lastEngine : undefined)
      if (i === undefined) break
      place(central.shift() as Seq, i)
    }
  }

  for (const t of trajs) { t.context = t.prompt; arrive(t) }
  while (events.size > 0) {
    const { t, v } = events.pop()
    now = t
    if (v.kind === 'arrive') { arrive(v.traj); continue }
    const e = engines[v.engine]
    for (const s of e.running) { s.generated++; e.used++; generated++ }
    const done = e.running.filter((s) => s.generated >= s.target)
    e.running = e.running.filter((s) => s.generated < s.target)
    for (const s of done) { e.used -= s.traj.context + s.generated; toCache(e, s.traj, s.traj.context + s.generated) }
    makeRoom(e)
    while (e.used > p.capacityTokens && e.running.length > 1) {
      const victim = e.running.pop() as Seq
      const tokens = victim.traj.context + victim.generated
      e.used -= tokens
      victim.preempted = true
      e.waiting.unshift(victim)
      evictions++
      toCache(e, victim.traj, tokens)
    }
    for (const s of done) finishTurn(s)
    startStep(v.engine)
  }
  const times = trajs.map((t) => t.doneAt / 1000).sort((a, b) => a - b)
  const makespan = Math.max(...times)
  const busy = engines.map((e) => e.busyMs)
  const meanBusy = busy.reduce((a, b) => a + b, 0) / busy.length
  return {
    variant: variant.name,
    makespanS: makespan,
    tokensPerS: generated / makespan,
    generatedTokens: generated,
    evictions,
    recomputedTokens: recomputed,
    prefixHitRate: promptTokens === 0 ? 0 : hitTokens / promptTokens,
    trajectoryP50S: times[Math.floor(times.length * 0.5)],
    trajectoryP99S: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))],
    imbalance: Math.max(...busy) / meanBusy
  }
}

/** The schedulers compared. */
export const VARIANTS: SimVariant[] = [
  { name: 'kv, max-length reservation', policy: 'kv' },
  { name: 'kv, reserve 1024 + reported usage', policy: 'kv', reserveNewTokens: 1024, reportUsage: true },
  { name: 'kv, reserve 512 + reported usage', policy: 'kv', reserveNewTokens: 512, reportUsage: true },
  { name: 'kv, reserve 1024 + usage + turn affinity', policy: 'kv', reserveNewTokens: 1024, reportUsage: true, affinity: true },
  { name: 'least_requests', policy: 'least_requests' },
  { name: 'round_robin (per turn)', policy: 'round_robin' },
  { name: 'static round robin (per trajectory)', policy: 'round_robin', sticky: true }
]

function main (): void {
  const { values } = parseArgs({
    options: {
      engines: { type: 'string' }, capacity: { type: 'string' }, trajectories: { type: 'string' }, seeds: { type: 'string', default: '1,2,3' },
      'max-tokens-per-turn': { type: 'string' }, budget: { type: 'string' }, 'no-prefix-cache': { type: 'boolean' }
    }
  })
  const base: SimParams = {
    ...DEFAULT_SIM,
    ...(values.engines ? { engines: Number(values.engines) } : {}),
    ...(values.capacity ? { capacityTokens: Number(values.capacity) } : {}),
    ...(values.trajectories ? { trajectories: Number(values.trajectories) } : {}),
    ...(values['max-tokens-per-turn'] ? { maxTokensPerTurn: Number(values['max-tokens-per-turn']) } : {}),
    ...(values.budget ? { budget: Number(values.budget) } : {}),
    ...(values['no-prefix-cache'] ? { prefixCache: false } : {})
  }
  const seeds = (values.seeds ?? '1').split(',').map(Number)
  console.log(`# rollout scheduler simulation\n\n- date ${new Date().toISOString()}, commit ${gitCommit()}\n- command: node --import tsx benchmarks/src/rollout-scheduler-sim.ts ${process.argv.slice(2).join(' ')}`.trimEnd())
  console.log(`- ${base.engines} engines × ${base.capacityTokens} KV tokens, ${base.trajectories} trajectories, max ${base.maxTokensPerTurn} tokens/turn, budget ${base.budget}, prefix cache ${base.prefixCache ? 'on' : 'off'}, seeds ${seeds.join(',')}; simulated time (the machine's load does not change the figures)\n`)
  console.log('| scheduler | makespan s | tokens/s | evictions | recomputed tokens | prefix hits | trajectory p50 s | p99 s | imbalance |')
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
  let rrRate = 0
  const rows: string[] = []
  for (const variant of [...VARIANTS].reverse()) {
    const rs = seeds.map((seed) => simulate({ ...base, seed }, variant))
    const mean = (f: (r: SimResult) => number): number => rs.reduce((a, r) => a + f(r), 0) / rs.length
    const rate = mean((r) => r.tokensPerS)
    if (variant.policy === 'round_robin' && variant.sticky === true) rrRate = rate
    const vs = ` (×${(rate / rrRate).toFixed(2)})`
    rows.unshift(`| ${variant.name} | ${mean((r) => r.makespanS).toFixed(1)} | ${Math.round(rate)}${vs} | ${Math.round(mean((r) => r.evictions))} | ${Math.round(mean((r) => r.recomputedTokens))} | ${(100 * mean((r) => r.prefixHitRate)).toFixed(0)}% | ${mean((r) => r.trajectoryP50S).toFixed(1)} | ${mean((r) => r.trajectoryP99S).toFixed(1)} | ${mean((r) => r.imbalance).toFixed(2)} |`)
  }
  console.log(rows.join('\n'))
  console.log('\n(×: tokens/s relative to static round robin, the rStar2-Agent report\'s baseline; imbalance: busiest engine\'s busy time over the mean)')
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
