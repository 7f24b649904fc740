/**
 * One simulated inference engine, modelled on vLLM V1's scheduler, for the rollout scheduler
 * simulation. What the rStar2-Agent report §3.2 is about happens here: an engine whose KV cache
 * runs out while its sequences grow preempts running sequences (the newest first), frees their
 * KV and recomputes them later from scratch, and a recompute costs what a prefill of that many
 * tokens costs, more the longer the sequence.
 *
 * Each step (vLLM V1's `Scheduler.schedule`): the running sequences first, oldest first, each
 * computing its next token (decode) or its next chunk of prefill, within a token budget per step
 * (`max_num_batched_tokens`); a sequence whose tokens do not fit in the free KV makes the newest
 * running sequence give its KV up (preempted, back to the head of the queue, to be recomputed),
 * until it fits or is itself the newest. Then, when nothing was preempted, waiting sequences in
 * order while the budget, `max_num_seqs` and the free KV allow (no preemption to admit one).
 * The KV of a finished or preempted sequence stays in free space as a prefix cache (vLLM's
 * automatic prefix caching), evicted least recently used; a later sequence of the same
 * trajectory prefills only what it lacks.
 *
 * The step costs a roofline-style sum: the weights read once, every computed token's weight
 * FLOPs, each decoding sequence's KV read, and each prefill token's attention over the tokens
 * before it. {@link H100_QWEN3_14B} derives each term.
 */

/** What a step costs, ms. */
export interface StepCost {
  /** Every step: the weights read once from HBM (the floor of a decode step). */
  baseMs: number
  /** Per token computed, decode or prefill: 2 × parameters FLOPs. */
  perTokenMs: number
  /** Per token of KV a decoding sequence reads (decode attention is memory-bound). */
  kvReadMsPerToken: number
  /** Per (prefill token × token before it): the attention FLOPs of a prefill, quadratic in its length. */
  attentionMsPerTokenPair: number
}

/** An engine: its KV cache, its scheduler's limits, its step cost. */
export interface EngineModel {
  /** KV cache, tokens (vLLM's `num_gpu_blocks` × `block_size`). */
  capacityTokens: number
  /** Tokens computed per step at most (`max_num_batched_tokens`; prefill is chunked to fit). */
  maxBatchedTokens: number
  /** Sequences running at once at most (`max_num_seqs`). */
  maxSeqs: number
  /** Finished and preempted sequences' KV stays in free space as a prefix cache. */
  prefixCache: boolean
  cost: StepCost
}

/**
 * Qwen3-14B (14.8 B parameters; 40 layers, 40 query and 8 KV heads of 128) in bf16 on one H100
 * SXM (80 GB, 3.35 TB/s HBM, 989 TFLOP/s dense bf16), vLLM V1's defaults there: rStar2-Agent's
 * model size on a common GPU.
 * - KV per token: 2 (K, V) × 40 layers × 8 heads × 128 × 2 bytes = 160 KiB. Capacity: 90% of
 *   80 GB (`gpu_memory_utilization` 0.9) less 29.6 GB of weights and ~4 GB of activations and
 *   graphs ≈ 38 GB ≈ 229,376 tokens (14,336 blocks of 16).
 * - baseMs 10: 29.6 GB of weights at ~80% of 3.35 TB/s is 11 ms.
 * - perTokenMs 0.06: 2 × 14.8 G = 29.6 GFLOP a token at ~50% of peak (≈ 490 TFLOP/s).
 * - kvReadMsPerToken 0.00006: 160 KiB at ~80% of 3.35 TB/s.
 * - attentionMsPerTokenPair 0.0000017: 4 × 40 layers × 5,120 (40 heads × 128) FLOPs per pair of
 *   tokens at ~490 TFLOP/s.
 * - `max_num_batched_tokens` 8,192 and `max_num_seqs` 1,024: vLLM V1's defaults for its server
 *   on GPUs of 70 GB or more; prefix caching on (V1's default).
 * So a decode step of 256 sequences of 2,000 tokens costs 10 + 15.4 + 30.7 = 56 ms, and
 * recomputing a preempted 8,000-token sequence costs 480 ms of compute plus 54 ms of attention,
 * in one or two steps that every sequence on the engine waits for.
 */
export const H100_QWEN3_14B: EngineModel = Object.freeze({
  capacityTokens: 229_376,
  maxBatchedTokens: 8192,
  maxSeqs: 1024,
  prefixCache: true,
  cost: Object.freeze({ baseMs: 10, perTokenMs: 0.06, kvReadMsPerToken: 0.00006, attentionMsPerTokenPair: 0.0000017 })
})

/** One generation request on an engine: a turn of a trajectory. */
export interface SimSeq {
  /** Names the trajectory (its prefix-cache entry). */
  owner: object
  /** Tokens of context when the turn was sent (prompt, earlier turns, tool output). */
  context: number
  /** Tokens this turn generates. */
  target: number
  generated: number
  /** Tokens whose KV the engine holds. */
  computed: number
  /** Tokens lost to preemptions and not yet computed again. */
  lost: number
}

/** What one step did. */
export interface StepOutcome {
  /** Sequences that generated their last token this step. */
  finished: SimSeq[]
  /** Tokens generated this step. */
  generated: number
}

/** Counters of one engine. */
export interface EngineCounters {
  preemptions: number
  /** Tokens computed again after preemptions. */
  recomputedTokens: number
  /** Prefill tokens admitted, and those the prefix cache already held. */
  promptTokens: number
  cachedTokens: number
  /** Simulated time spent in steps, ms. */
  busyMs: number
}

/** A simulated engine; {@link SimEngine.step} plans and costs one step, {@link SimEngine.finishStep} applies it. */
export class SimEngine {
  readonly running: SimSeq[] = []
  readonly waiting: SimSeq[] = []
  /** KV tokens held by running sequences. */
  used = 0
  readonly counters: EngineCounters = {
    preemptions: 0,
    recomputedTokens: 0,
    promptTokens: 0,
    cachedTokens: 0,
    busyMs: 0
  }
  /** Trajectory → tokens of its KV kept in free space, least recently used first. */
  private readonly cache = new Map<object, number>()
  private cached = 0
  private planned: Array<{ seq: SimSeq; tokens: number }> = []

  /** An engine of `model`. */
  constructor(readonly model: EngineModel) {}

  /** True while a step is planned and not yet finished. */
  get busy(): boolean {
    return this.planned.length > 0
  }

  /** Queues a request. */
  submit(seq: SimSeq): void {
    this.waiting.push(seq)
  }

  /** Frees cached KV, oldest first, until `tokens` more fit beside what is held and cached. */
  private fit(tokens: number): boolean {
    for (const [owner, n] of this.cache) {
      if (this.used + this.cached + tokens <= this.model.capacityTokens) break
      this.cache.delete(owner)
      this.cached -= n
    }
    return this.used + this.cached + tokens <= this.model.capacityTokens
  }

  private keep(seq: SimSeq): void {
    if (!this.model.prefixCache || seq.computed === 0) return
    const old = this.cache.get(seq.owner)
    if (old !== undefined) {
      this.cache.delete(seq.owner)
      this.cached -= old
    }
    this.cache.set(seq.owner, seq.computed)
    this.cached += seq.computed
    this.fit(0)
  }

  private preempt(victim: SimSeq): void {
    this.used -= victim.computed
    this.keep(victim)
    victim.lost = Math.max(victim.lost, victim.computed)
    victim.computed = 0
    this.waiting.unshift(victim)
    this.counters.preemptions++
  }

  /** Plans the next step; returns its cost in ms, or undefined when there is nothing to run. */
  step(): number | undefined {
    const cost = this.model.cost
    let budget = this.model.maxBatchedTokens
    let ms = cost.baseMs
    let preempted = false
    const plan: Array<{ seq: SimSeq; tokens: number }> = []
    const take = (seq: SimSeq, tokens: number): void => {
      const start = seq.computed
      if (seq.context + seq.generated - start === 1) ms += cost.kvReadMsPerToken * start
      else ms += cost.attentionMsPerTokenPair * tokens * (start + tokens / 2)
      ms += cost.perTokenMs * tokens
      const again = Math.min(tokens, seq.lost - start)
      if (again > 0) this.counters.recomputedTokens += again
      seq.computed += tokens
      this.used += tokens
      budget -= tokens
      plan.push({ seq, tokens })
    }
    for (let k = 0; k < this.running.length && budget > 0; k++) {
      const seq = this.running[k]
      const tokens = Math.min(seq.context + seq.generated - seq.computed, budget)
      while (!this.fit(tokens)) {
        preempted = true
        const victim = this.running.pop() as SimSeq
        this.preempt(victim)
        if (victim === seq) break
      }
      if (this.running[k] !== seq) break
      take(seq, tokens)
    }
    while (!preempted && budget > 0 && this.waiting.length > 0 && this.running.length < this.model.maxSeqs) {
      const seq = this.waiting[0]
      const length = seq.context + seq.generated
      const hit = Math.min(this.cache.get(seq.owner) ?? 0, length - 1)
      const tokens = Math.min(length - hit, budget)
      const held = this.cache.get(seq.owner) ?? 0
      // the cached blocks it reuses leave the cache for the sequence; the rest of its entry is freed
      this.cache.delete(seq.owner)
      this.cached -= held
      // an engine with nothing running takes the head whatever its size, so nothing waits forever
      if (!this.fit(hit + tokens) && this.running.length > 0) {
        if (held > 0) {
          this.cache.set(seq.owner, held)
          this.cached += held
        }
        break
      }
      this.waiting.shift()
      this.running.push(seq)
      seq.computed = hit
      this.used += hit
      this.counters.promptTokens += length
      this.counters.cachedTokens += hit
      take(seq, tokens)
    }
    if (plan.length === 0) return undefined
    this.planned = plan
    this.counters.busyMs += ms
    return ms
  }

  /** Ends the planned step: each sequence whose tokens are all computed samples one; finished ones leave. */
  finishStep(): StepOutcome {
    const finished: SimSeq[] = []
    let generated = 0
    for (const { seq } of this.planned) {
      if (seq.computed < seq.context + seq.generated) continue // a prefill chunk with more to come
      seq.generated++
      generated++
      if (seq.generated >= seq.target) finished.push(seq)
    }
    this.planned = []
    for (const seq of finished) {
      this.running.splice(this.running.indexOf(seq), 1)
      this.used -= seq.computed
      this.keep(seq)
    }
    return { finished, generated }
  }
}
