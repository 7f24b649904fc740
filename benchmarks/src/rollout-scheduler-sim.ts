/**
 * Rollout scheduler simulation: the rollouts of one RL step ({@link makeTrajectories}) over
 * several simulated vLLM V1 engines ({@link SimEngine}: KV cache, chunked prefill, preemption
 * by recompute, prefix cache; the step cost of {@link H100_QWEN3_14B}), each turn a new
 * generation request spread by the trainer's own `EnginePicker` as `KvScheduler` uses it: by
 * free KV (`kv`, with its reservation and, optionally, the engines' reported usage), least
 * requests, round robin per turn, or statically per trajectory (the rStar2-Agent report's
 * baseline). Figures: makespan, generated tokens/s, preemptions and the tokens recomputed after
 * them, prefix-cache hits, trajectory completion p50/p99. A discrete-event simulation: no GPU,
 * deterministic per seed, its figures independent of what else the machine runs.
 *
 * Usage: node --import tsx benchmarks/src/rollout-scheduler-sim.ts [--engines 4] [--loads 32,64,128,256,512,1024]
 *        [--seeds 1,2,3] [--capacity 229376] [--max-tokens-per-turn 4096] [--budget 8192]
 *        [--usage-poll-ms 200] [--no-prefix-cache]
 */
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { DEFAULT_SCHEDULE_POLICY, EnginePicker, type EngineSlot, type SchedulePolicy } from '@sandfleet/trainer'
import { gitCommit } from './environment.ts'
import { H100_QWEN3_14B, SimEngine, type EngineModel, type SimSeq } from './rollout-sim/sim-engine.ts'
import { DEFAULT_WORKLOAD, makeTrajectories, type Trajectory, type Workload } from './rollout-sim/workload.ts'

/** Parameters of one simulation. */
export interface SimParams {
  engines: number
  engine: EngineModel
  workload: Workload
  /** How often the scheduler reads each engine's KV usage, for variants that do (`KvScheduler`'s `usagePollMs`). */
  usagePollMs: number
}

/** Defaults: 4 engines of {@link H100_QWEN3_14B}, the {@link DEFAULT_WORKLOAD}, usage read every 200 ms. */
export const DEFAULT_SIM: SimParams = Object.freeze({
  engines: 4,
  engine: H100_QWEN3_14B,
  workload: DEFAULT_WORKLOAD,
  usagePollMs: 200
})

/** A scheduler under test: a policy and, for `kv`, how much it reserves and whether it reads usage. */
export interface SimVariant {
  name: string
  policy: SchedulePolicy
  /** New tokens reserved per generation (default its max tokens: the report's max-length estimate). */
  reserveNewTokens?: number
  /** The picker also sees each engine's KV tokens in use, read every `usagePollMs`. */
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
  preemptions: number
  recomputedTokens: number
  /** Prompt tokens served from the prefix cache over all prompt tokens admitted. */
  prefixHitRate: number
  trajectoryP50S: number
  trajectoryP99S: number
  /** Busiest engine's busy time over the mean: 1 is perfect balance. */
  imbalance: number
}

interface Request {
  traj: Trajectory
  seq: SimSeq
  need: number
  engine: number
}

type Event = { kind: 'arrive'; traj: Trajectory } | { kind: 'step'; engine: number } | { kind: 'poll' }

class Heap<T> {
  private readonly items: Array<{ t: number; n: number; v: T }> = []
  private n = 0
  get size(): number {
    return this.items.length
  }
  push(t: number, v: T): void {
    const a = this.items
    a.push({ t, n: this.n++, v })
    let i = a.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (this.less(a[p], a[i])) break
      ;[a[p], a[i]] = [a[i], a[p]]
      i = p
    }
  }
  pop(): { t: number; v: T } {
    const a = this.items
    const top = a[0]
    const last = a.pop() as typeof top
    if (a.length > 0) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && this.less(a[l], a[m])) m = l
        if (r < a.length && this.less(a[r], a[m])) m = r
        if (m === i) break
        ;[a[m], a[i]] = [a[i], a[m]]
        i = m
      }
    }
    return top
  }
  private less(a: { t: number; n: number }, b: { t: number; n: number }): boolean {
    return a.t < b.t || (a.t === b.t && a.n < b.n)
  }
}

/** Runs one scheduler over the workload of `p.workload.seed`. */
export function simulate(p: SimParams, variant: SimVariant): SimResult {
  const w = p.workload
  const trajs = makeTrajectories(w)
  const picker = new EnginePicker(variant.policy)
  const slots: EngineSlot[] = Array.from({ length: p.engines }, () => ({
    capacityTokens: p.engine.capacityTokens,
    reservedTokens: 0,
    inFlight: 0
  }))
  const engines = Array.from({ length: p.engines }, () => new SimEngine(p.engine))
  const bySeq = new Map<SimSeq, Request>()
  const central: Request[] = []
  const events = new Heap<Event>()
  let now = 0
  let generated = 0
  let unfinished = trajs.length

  const run = (i: number): void => {
    if (engines[i].busy) return
    const ms = engines[i].step()
    if (ms !== undefined) events.push(now + ms, { kind: 'step', engine: i })
  }
  const place = (r: Request, i: number): void => {
    r.engine = i
    r.traj.lastEngine = i
    slots[i].reservedTokens += r.need
    slots[i].inFlight++
    bySeq.set(r.seq, r)
    engines[i].submit(r.seq)
    run(i)
  }
  const preferred = (t: Trajectory): number | undefined =>
    variant.affinity === true && t.lastEngine >= 0 ? t.lastEngine : undefined
  const dispatch = (r: Request): void => {
    if (variant.sticky === true && r.traj.engine >= 0) {
      place(r, r.traj.engine)
      return
    }
    const i = central.length === 0 ? picker.pick(slots, r.need, preferred(r.traj)) : undefined
    if (variant.sticky === true && i !== undefined) r.traj.engine = i
    if (i === undefined) central.push(r)
    else place(r, i)
  }
  const arrive = (t: Trajectory): void => {
    const maxTokens = Math.min(w.maxTokensPerTurn, w.budget - t.response)
    const seq: SimSeq = {
      owner: t,
      context: t.context,
      target: Math.min(maxTokens, t.turns[t.turn].length),
      generated: 0,
      computed: 0,
      lost: 0
    }
    dispatch({ traj: t, seq, need: t.context + Math.min(maxTokens, variant.reserveNewTokens ?? maxTokens), engine: -1 })
  }
  const finishTurn = (r: Request): void => {
    const t = r.traj
    bySeq.delete(r.seq)
    slots[r.engine].reservedTokens -= r.need
    slots[r.engine].inFlight--
    t.context += r.seq.generated
    t.response += r.seq.generated
    const turn = t.turns[t.turn]
    t.turn++
    if (t.turn < t.turns.length && t.response + turn.toolTokens < w.budget - 8) {
      t.context += turn.toolTokens
      t.response += turn.toolTokens
      events.push(now + turn.toolMs, { kind: 'arrive', traj: t })
    } else {
      t.doneAt = now
      unfinished--
    }
    while (central.length > 0) {
      const head = central[0]
      const i = picker.pick(slots, head.need, preferred(head.traj))
      if (i === undefined) break
      place(central.shift() as Request, i)
    }
  }
  const poll = (): void => {
    engines.forEach((e, i) => {
      slots[i].usedTokens = e.used
    })
    if (unfinished > 0) events.push(now + p.usagePollMs, { kind: 'poll' })
  }

  if (variant.reportUsage === true) poll()
  for (const t of trajs) arrive(t)
  while (events.size > 0) {
    const { t, v } = events.pop()
    now = t
    if (v.kind === 'arrive') {
      arrive(v.traj)
      continue
    }
    if (v.kind === 'poll') {
      poll()
      continue
    }
    const outcome = engines[v.engine].finishStep()
    generated += outcome.generated
    for (const seq of outcome.finished) finishTurn(bySeq.get(seq) as Request)
    run(v.engine)
  }
  const times = trajs.map((x) => x.doneAt / 1000).sort((a, b) => a - b)
  const makespan = times[times.length - 1]
  const busy = engines.map((e) => e.counters.busyMs)
  const meanBusy = busy.reduce((a, b) => a + b, 0) / busy.length
  const sum = (f: (e: SimEngine) => number): number => engines.reduce((a, e) => a + f(e), 0)
  const prompt = sum((e) => e.counters.promptTokens)
  return {
    variant: variant.name,
    makespanS: makespan,
    tokensPerS: generated / makespan,
    generatedTokens: generated,
    preemptions: sum((e) => e.counters.preemptions),
    recomputedTokens: sum((e) => e.counters.recomputedTokens),
    prefixHitRate: prompt === 0 ? 0 : sum((e) => e.counters.cachedTokens) / prompt,
    trajectoryP50S: times[Math.floor(times.length * 0.5)],
    trajectoryP99S: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))],
    imbalance: Math.max(...busy) / meanBusy
  }
}

/**
 * The schedulers compared; `kv` as `KvScheduler` runs it under `runEpisode` (turn affinity on) unless named otherwise.
 */
export const VARIANTS: readonly SimVariant[] = Object.freeze([
  { name: 'kv, max-length reservation (report §3.2)', policy: 'kv', affinity: true },
  {
    name: 'kv, reserve 1024 + reported usage',
    policy: 'kv',
    reserveNewTokens: 1024,
    reportUsage: true,
    affinity: true
  },
  { name: 'kv, reserve 512 + reported usage', policy: 'kv', reserveNewTokens: 512, reportUsage: true, affinity: true },
  {
    name: 'kv, reserve 1024 + reported usage, no turn affinity',
    policy: 'kv',
    reserveNewTokens: 1024,
    reportUsage: true
  },
  { name: 'least requests (the default)', policy: 'least_requests' },
  { name: 'round robin per turn', policy: 'round_robin' },
  { name: "static round robin per trajectory (the report's baseline)", policy: 'round_robin', sticky: true }
])

/** The variant of `KvScheduler`'s default policy. */
export const DEFAULT_VARIANT = VARIANTS.find((v) => v.policy === DEFAULT_SCHEDULE_POLICY) as SimVariant

/** Mean figures of `variant` over `seeds`. */
export function meanOverSeeds(p: SimParams, variant: SimVariant, seeds: readonly number[]): SimResult {
  const rs = seeds.map((seed) => simulate({ ...p, workload: { ...p.workload, seed } }, variant))
  const mean = (f: (r: SimResult) => number): number => rs.reduce((a, r) => a + f(r), 0) / rs.length
  return {
    variant: variant.name,
    makespanS: mean((r) => r.makespanS),
    tokensPerS: mean((r) => r.tokensPerS),
    generatedTokens: mean((r) => r.generatedTokens),
    preemptions: mean((r) => r.preemptions),
    recomputedTokens: mean((r) => r.recomputedTokens),
    prefixHitRate: mean((r) => r.prefixHitRate),
    trajectoryP50S: mean((r) => r.trajectoryP50S),
    trajectoryP99S: mean((r) => r.trajectoryP99S),
    imbalance: mean((r) => r.imbalance)
  }
}

function main(): void {
  const { values } = parseArgs({
    options: {
      engines: { type: 'string' },
      capacity: { type: 'string' },
      loads: { type: 'string', default: '32,64,128,256,512,1024' },
      seeds: { type: 'string', default: '1,2,3' },
      'max-tokens-per-turn': { type: 'string' },
      budget: { type: 'string' },
      'usage-poll-ms': { type: 'string' },
      'no-prefix-cache': { type: 'boolean' }
    }
  })
  const base: SimParams = {
    engines: values.engines ? Number(values.engines) : DEFAULT_SIM.engines,
    engine: {
      ...H100_QWEN3_14B,
      ...(values.capacity ? { capacityTokens: Number(values.capacity) } : {}),
      ...(values['no-prefix-cache'] ? { prefixCache: false } : {})
    },
    workload: {
      ...DEFAULT_WORKLOAD,
      ...(values['max-tokens-per-turn'] ? { maxTokensPerTurn: Number(values['max-tokens-per-turn']) } : {}),
      ...(values.budget ? { budget: Number(values.budget) } : {})
    },
    usagePollMs: values['usage-poll-ms'] ? Number(values['usage-poll-ms']) : DEFAULT_SIM.usagePollMs
  }
  const seeds = (values.seeds ?? '1').split(',').map(Number)
  const loads = (values.loads ?? '64').split(',').map(Number)
  const e = base.engine
  console.log(
    `# rollout scheduler simulation\n\n- date ${new Date().toISOString()}, commit ${gitCommit()}\n- command: node --import tsx benchmarks/src/rollout-scheduler-sim.ts ${process.argv.slice(2).join(' ')}`.trimEnd()
  )
  console.log(
    `- ${base.engines} engines × ${e.capacityTokens} KV tokens (max_num_batched_tokens ${e.maxBatchedTokens}, max_num_seqs ${e.maxSeqs}, prefix cache ${e.prefixCache ? 'on' : 'off'}; step ${e.cost.baseMs} ms + ${e.cost.perTokenMs} ms/token + ${e.cost.kvReadMsPerToken} ms/KV token read + ${e.cost.attentionMsPerTokenPair} ms/prefill token pair), max ${base.workload.maxTokensPerTurn} tokens/turn, budget ${base.workload.budget}, usage read every ${base.usagePollMs} ms, seeds ${seeds.join(',')} (means); simulated time`
  )
  for (const perEngine of loads) {
    const p = { ...base, workload: { ...base.workload, trajectories: perEngine * base.engines } }
    const results = VARIANTS.map((v) => meanOverSeeds(p, v, seeds))
    const rr = results[results.length - 1].tokensPerS
    const byDefault = results[VARIANTS.indexOf(DEFAULT_VARIANT)].tokensPerS
    const best = results.reduce((a, r) => (r.tokensPerS > a.tokensPerS ? r : a))
    console.log(`\n## ${perEngine} trajectories per engine (${p.workload.trajectories})\n`)
    console.log(
      '| scheduler | makespan s | tokens/s | × default | × static RR | preemptions | recomputed tokens | prefix hits | trajectory p50 s | p99 s | imbalance |'
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for (const r of results) {
      console.log(
        `| ${r.variant} | ${r.makespanS.toFixed(1)} | ${Math.round(r.tokensPerS)} | ×${(r.tokensPerS / byDefault).toFixed(3)} | ×${(r.tokensPerS / rr).toFixed(3)} | ${Math.round(r.preemptions)} | ${Math.round(r.recomputedTokens)} | ${(100 * r.prefixHitRate).toFixed(0)}% | ${r.trajectoryP50S.toFixed(1)} | ${r.trajectoryP99S.toFixed(1)} | ${r.imbalance.toFixed(2)} |`
      )
    }
    console.log(`\nbest: ${best.variant} (×${(best.tokensPerS / byDefault).toFixed(3)} the default)`)
  }
  console.log("\n(imbalance: busiest engine's busy time over the mean)")
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main()
