/**
 * {@link KvScheduler}: one {@link Engine} over several, assigning each new generation (each turn of
 * each rollout) to an engine by a {@link SchedulePolicy}. The default, `least_requests`, sends it
 * to the engine with the fewest generations in flight. `kv` is the rStar2-Agent report's §3.2:
 * the engine with the most free KV capacity, and a generation waits while no engine has room for
 * its context and reservation, so no engine overflows, preempts and recomputes. It reserves
 * context + `maxTokens` by default (the report's max-length estimate) or `reserveNewTokens`,
 * optionally corrected by each engine's reported usage; capacity is given, or read once from
 * each engine's `/metrics`. Which one wins where, in simulation: benchmarks/RESULTS.md.
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { ChatMessage, ChatTemplateOptions, Engine, Generation, GenerateRequest } from '../engine/engine.ts'
import { isTransientEngineError } from '../engine/retrying-engine.ts'
import { readKvMetrics } from './engine-metrics.ts'
import { DEFAULT_SCHEDULE_POLICY, EnginePicker, type EngineSlot, type SchedulePolicy } from './pick-engine.ts'

/** An engine whose metrics can be read (as {@link CompletionsEngine}). */
export interface MetricsSource {
  metricsText?: (signal?: AbortSignal) => Promise<string>
}

/** Options of {@link KvScheduler.create}. */
export interface KvSchedulerOptions {
  engines: Array<Engine & MetricsSource>
  /** Default `least_requests` ({@link DEFAULT_SCHEDULE_POLICY}); `kv` and `round_robin`. */
  policy?: SchedulePolicy
  /**
   * KV capacity, tokens: one figure for every engine or one per engine. Default: read from `/metrics` under `kv` (the
   * other policies do not use it: 0 unless given).
   */
  capacityTokens?: number | number[]
  /**
   * New tokens `kv` reserves per generation (default: its `maxTokens`, the report's max-length
   * estimate, which never overflows but holds room most turns never use; see
   * benchmarks/RESULTS.md for the trade-off).
   */
  reserveNewTokens?: number
  /**
   * Read each engine's KV usage from its `/metrics` this often, ms; `kv`'s free is then capacity − max(reserved, used).
   * Off by default.
   */
  usagePollMs?: number
  /**
   * An engine that failed with a connection error, 429 or 5xx gets no new generation for this long, ms (default 5000),
   * while another is up.
   */
  cooldownMs?: number
}

/** What the scheduler shows of one engine. */
export interface EngineStats extends EngineSlot {
  url: string
  /** Generations sent there so far. */
  generations: number
}

/** Most trajectories whose last engine the scheduler remembers. */
const AFFINITY_LIMIT = 65_536

interface Waiter {
  need: number
  preferred: number | undefined
  resolve: (i: number) => void
  reject: (e: unknown) => void
  signal: AbortSignal | undefined
  onAbort: () => void
}

/** A scheduling {@link Engine} over several engines. */
export class KvScheduler implements Engine {
  readonly url: string
  private readonly engines: Array<Engine & MetricsSource>
  private readonly slots: EngineStats[]
  private readonly picker: EnginePicker
  private readonly queue: Waiter[] = []
  private tokenizeNext = 0
  private readonly reserveNewTokens: number | undefined
  private poll: NodeJS.Timeout | undefined
  private readonly cooldownMs: number
  private readonly cooling = new Set<NodeJS.Timeout>()
  /** Trajectory → engine of its last turn (oldest forgotten first past {@link AFFINITY_LIMIT}). */
  private readonly lastEngine = new Map<string, number>()

  private constructor(engines: Array<Engine & MetricsSource>, capacities: number[], options: KvSchedulerOptions) {
    const policy = options.policy ?? DEFAULT_SCHEDULE_POLICY
    this.engines = engines
    this.reserveNewTokens = options.reserveNewTokens
    this.cooldownMs = options.cooldownMs ?? 5000
    this.picker = new EnginePicker(policy)
    this.slots = engines.map((e, i) => ({
      url: e.url,
      capacityTokens: capacities[i],
      reservedTokens: 0,
      inFlight: 0,
      generations: 0
    }))
    this.url = `scheduler(${policy}: ${engines.map((e) => e.url).join(', ')})`
    if (options.usagePollMs !== undefined) {
      this.poll = setInterval(() => {
        void this.readUsage()
      }, options.usagePollMs)
      this.poll.unref()
    }
  }

  /** Reads every engine's KV usage once (what `usagePollMs` does periodically); failures leave the last figure. */
  async readUsage(): Promise<void> {
    await Promise.all(
      this.engines.map(async (e, i) => {
        if (e.metricsText === undefined) return
        try {
          const kv = readKvMetrics(await e.metricsText(AbortSignal.timeout(2000)))
          if (kv.usage !== undefined) this.slots[i].usedTokens = Math.round(kv.usage * this.slots[i].capacityTokens)
        } catch {}
      })
    )
  }

  /** A scheduler; under `kv` reads each engine's KV capacity from its metrics unless `capacityTokens` is given. */
  static async create(options: KvSchedulerOptions): Promise<KvScheduler> {
    const { engines } = options
    if (engines.length === 0)
      throw new TrainerError(TRAINER_ERROR_CODES.BAD_INPUT, 'the scheduler needs at least one engine', 400)
    const given = options.capacityTokens
    const capacities = await Promise.all(
      engines.map(async (e, i) => {
        if (typeof given === 'number') return given
        if (Array.isArray(given) && given[i] !== undefined) return given[i]
        if ((options.policy ?? DEFAULT_SCHEDULE_POLICY) !== 'kv') return 0
        if (e.metricsText === undefined)
          throw new TrainerError(
            TRAINER_ERROR_CODES.BAD_INPUT,
            `engine ${e.url} has no metrics; give capacityTokens`,
            400
          )
        const kv = readKvMetrics(await e.metricsText())
        if (kv.capacityTokens === undefined)
          throw new TrainerError(
            TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE,
            `the metrics of ${e.url} name no KV capacity (vllm:cache_config_info or sglang:max_total_num_tokens); give capacityTokens`,
            502
          )
        return kv.capacityTokens
      })
    )
    return new KvScheduler(engines, capacities, options)
  }

  /** Per-engine capacity, reservations and counts, and the generations waiting for room. */
  stats(): { engines: EngineStats[]; waiting: number } {
    return { engines: this.slots.map((s) => ({ ...s })), waiting: this.queue.length }
  }

  private take(i: number, need: number): number {
    const s = this.slots[i]
    s.reservedTokens += need
    s.inFlight++
    s.generations++
    return i
  }

  private release(i: number, need: number): void {
    const s = this.slots[i]
    s.reservedTokens -= need
    s.inFlight--
    this.drain()
  }

  /** Takes an engine out of the picks for the cool-down after a transient failure. */
  private coolDown(i: number): void {
    if (this.cooldownMs <= 0 || this.slots[i].available === false) return
    this.slots[i].available = false
    const timer = setTimeout(() => {
      this.cooling.delete(timer)
      this.slots[i].available = true
      this.drain()
    }, this.cooldownMs)
    timer.unref()
    this.cooling.add(timer)
  }

  private drain(): void {
    while (this.queue.length > 0) {
      // first come, first served: the head waits for room, the rest behind it
      const head = this.queue[0]
      const at = this.picker.pick(this.slots, head.need, head.preferred)
      if (at === undefined) break
      this.queue.shift()
      head.signal?.removeEventListener('abort', head.onAbort)
      head.resolve(this.take(at, head.need))
    }
  }

  private async acquire(need: number, preferred: number | undefined, signal?: AbortSignal): Promise<number> {
    const at = this.queue.length === 0 ? this.picker.pick(this.slots, need, preferred) : undefined
    if (at !== undefined) return this.take(at, need)
    return await new Promise<number>((resolve, reject) => {
      const waiter: Waiter = {
        need,
        preferred,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const k = this.queue.indexOf(waiter)
          if (k >= 0) this.queue.splice(k, 1)
          reject(
            new TrainerError(TRAINER_ERROR_CODES.ABORTED, 'aborted while waiting for KV capacity', 499, {
              cause: signal?.reason
            })
          )
        }
      }
      if (signal?.aborted) {
        waiter.onAbort()
        return
      }
      signal?.addEventListener('abort', waiter.onAbort, { once: true })
      this.queue.push(waiter)
    })
  }

  /**
   * Generates on the engine the policy picks, waiting for room under `kv`; under `kv` a turn of a
   * trajectory (`affinity`) goes back to the engine of its previous turn when that one has room.
   */
  async generate(req: GenerateRequest): Promise<Generation> {
    const need = req.promptIds.length + Math.min(req.maxTokens, this.reserveNewTokens ?? req.maxTokens)
    const preferred = req.affinity !== undefined ? this.lastEngine.get(req.affinity) : undefined
    const i = await this.acquire(need, preferred, req.signal)
    if (req.affinity !== undefined) {
      this.lastEngine.delete(req.affinity)
      this.lastEngine.set(req.affinity, i)
      if (this.lastEngine.size > AFFINITY_LIMIT) this.lastEngine.delete(this.lastEngine.keys().next().value as string)
    }
    try {
      return await this.engines[i].generate(req)
    } catch (err) {
      if (isTransientEngineError(err)) this.coolDown(i)
      throw err
    } finally {
      this.release(i, need)
    }
  }

  private tokenizer(): Engine {
    const e = this.engines[this.tokenizeNext % this.engines.length]
    this.tokenizeNext++
    return e
  }

  /** Tokenizes on the engines in turn (they serve one model). */
  async tokenize(text: string, signal?: AbortSignal): Promise<number[]> {
    return await this.tokenizer().tokenize(text, signal)
  }

  /** Applies the chat template on the engines in turn. */
  async applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): Promise<number[]> {
    return await this.tokenizer().applyChatTemplate(messages, options)
  }

  /** Closes every engine; safe to call twice. */
  async close(): Promise<void> {
    if (this.poll !== undefined) {
      clearInterval(this.poll)
      this.poll = undefined
    }
    for (const t of this.cooling) clearTimeout(t)
    this.cooling.clear()
    for (const w of this.queue.splice(0))
      w.reject(new TrainerError(TRAINER_ERROR_CODES.ABORTED, 'the scheduler was closed', 499))
    await Promise.all(this.engines.map(async (e) => await e.close()))
  }
}
