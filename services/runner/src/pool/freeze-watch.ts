/**
 * The runner's own clock, watched for freezes: a runner stopped as a whole (`docker pause`, SIGSTOP
 * then SIGCONT, a host suspended, an event loop blocked) finds on waking that its clock jumped
 * past deadlines it never got to serve. A sandbox frozen with it (the process backend's run in
 * the runner's container) wakes past its own `timeout_ms` too and stops its job: that `timeout`
 * measures the freeze, not the code. So a job answered `timeout` whose run a freeze overlapped is
 * answered `infra_error` (stalled, the fleet's fault) instead, and so is a job whose hard deadline
 * fired late by more than a freeze: the pool asks here.
 *
 * One ticker a runner (unref'd): a tick that comes later than its period plus `thresholdMs` marks
 * the time between the two ticks as a freeze. A check also ticks, so a freeze is seen by the first
 * thing that runs after it, whatever its order in the event loop's turn.
 */

/** One freeze: the runner's clock (`performance.now()`) jumped from `from` to `to`. */
export interface Freeze {
  readonly from: number
  readonly to: number
}

/** Freezes remembered at most (a check looks at the ones after a job's start). */
const KEPT = 64

/** Watches the runner's clock for jumps longer than `thresholdMs`; see the module comment. */
export class FreezeWatch {
  readonly #tickMs: number
  readonly #freezes: Freeze[] = []
  #last = performance.now()
  #timer: NodeJS.Timeout | undefined

  /** `thresholdMs`: a gap between ticks longer than the tick's period plus this is a freeze. */
  constructor(readonly thresholdMs: number) {
    this.#tickMs = Math.max(10, Math.min(250, Math.floor(thresholdMs / 4)))
    this.#timer = setInterval(() => this.#tick(), this.#tickMs).unref()
  }

  /** The freezes seen, oldest first (at most the last 64). */
  get freezes(): readonly Freeze[] {
    this.#tick()
    return this.#freezes
  }

  /** The longest freeze that ended after `since` (`performance.now()`), in ms; 0 when there was none. */
  frozenSince(since: number): number {
    this.#tick()
    let longest = 0
    for (const f of this.#freezes) if (f.to > since) longest = Math.max(longest, f.to - Math.max(f.from, since))
    return longest
  }

  /**
   * A timer meant for `dueAt` fired at `now`: when that is later than the threshold, the runner was frozen from then
   * (it never got to serve it). Returns how late it fired, in ms.
   */
  late(dueAt: number, now = performance.now()): number {
    const late = now - dueAt
    if (late > this.thresholdMs) this.#record(dueAt, now)
    return late
  }

  /** Stops the ticker. Idempotent. */
  close(): void {
    clearInterval(this.#timer)
    this.#timer = undefined
  }

  #tick(): void {
    const now = performance.now()
    if (now - this.#last > this.#tickMs + this.thresholdMs) this.#record(this.#last, now)
    this.#last = now
  }

  #record(from: number, to: number): void {
    const last = this.#freezes.at(-1)
    if (last !== undefined && from <= last.to) {
      this.#freezes[this.#freezes.length - 1] = { from: Math.min(last.from, from), to: Math.max(last.to, to) }
      return
    }
    this.#freezes.push({ from, to })
    if (this.#freezes.length > KEPT) this.#freezes.shift()
  }
}
