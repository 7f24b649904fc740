/**
 * A job's hard deadline: one timer per job, the backstop for a sandbox (or a runner) that stopped
 * answering. The code's own `timeout` is the sandbox's to report, at `timeout_ms` (its soft stop
 * and the stop's grace); what this timer catches is the fleet's fault, answered `infra_error`
 * (stalled), never `timeout`. Armed when a sandbox takes the job, at `timeout_ms` plus the pool's
 * overrun (the driver's `stopMs` and the runner's `graceMs`) from then; moved later, to the same
 * from the moment the job reached the sandbox, when its frame took a while to get there, and again
 * from when the sandbox says the job reached the process that runs it ({@link delivered}); moved once, to the job's
 * `startBy` plus the same, when the sandbox says the job waits before it runs ({@link waiting}). It only ever moves
 * later. On expiry the pool answers the job and retires the sandbox, whose close is the hard kill
 * (pool.ts); whichever comes second, the sandbox's answer or the expiry, is ignored.
 */
import type { Job, JobWatch } from '../sandbox/contract.ts'

/** The hard deadline of one job in a sandbox; `of` is what its pool needs to answer it. */
export class JobDeadline<T> implements JobWatch {
  /** When the sandbox took the job (`performance.now()`). */
  readonly handedAt = performance.now()
  #timer: NodeJS.Timeout
  #endsAt: number
  #moved = false
  #delivered = false
  #answered = false

  /** Arms the deadline; `onExpiry` is called once, unless {@link answer} is called first. */
  constructor(
    readonly of: T,
    readonly job: Job,
    readonly overrunMs: number,
    private readonly onExpiry: (of: T, deadline: JobDeadline<T>) => void
  ) {
    this.#endsAt = this.handedAt + job.request.timeout_ms + overrunMs
    this.#timer = setTimeout(JobDeadline.#expire, job.request.timeout_ms + overrunMs, this)
  }

  /** When the deadline falls (`performance.now()`): a timer that fires much later says the runner was frozen. */
  get endsAt(): number {
    return this.#endsAt
  }

  /** The job waits in its sandbox before it runs: the deadline moves to its `startBy` plus the same time. */
  waiting(): void {
    if (this.#moved || this.#answered || this.job.startBy === undefined) return
    this.#moved = true
    this.#moveTo(Math.max(performance.now(), this.job.startBy) + this.job.request.timeout_ms + this.overrunMs)
  }

  /**
   * The job reached its sandbox only now, or the process that runs it: the deadline counts from
   * here (never earlier than it was). Its channel calls it at most twice: when a large frame is all
   * out, and when the sandbox says it handed the job over.
   */
  delivered(): void {
    if (this.#answered) return
    this.#delivered = true
    this.#moveTo(performance.now() + this.job.request.timeout_ms + this.overrunMs)
  }

  /** A step of a judge ended: its next step's time counts from here (never earlier than it did). */
  progressed(): void {
    if (this.#answered) return
    this.#moveTo(performance.now() + this.job.request.timeout_ms + this.overrunMs)
  }

  #moveTo(endsAt: number): void {
    if (endsAt <= this.#endsAt) return
    this.#endsAt = endsAt
    clearTimeout(this.#timer)
    this.#timer = setTimeout(JobDeadline.#expire, endsAt - performance.now(), this)
  }

  /** True the first time, when the answer is still to be given: the caller gives it and the timer stops. */
  answer(): boolean {
    if (this.#answered) return false
    this.#answered = true
    clearTimeout(this.#timer)
    return true
  }

  /**
   * Why the job was answered `infra_error` at this deadline, for its error message: `lateMs`, how late the timer fired,
   * when that says the runner itself was frozen past it (`frozen`).
   */
  describe(frozen = false, lateMs = 0): string {
    const t = this.job.request.timeout_ms
    const from = this.#moved ? " after the job's start deadline" : this.#delivered ? ' after the job reached it' : ''
    const limit = `timeout_ms=${t} plus ${this.overrunMs} ms${from}`
    if (frozen)
      return `stalled: the runner was frozen ${Math.round(lateMs)} ms past the job's hard deadline (${limit}) and holds no answer of its sandbox; the sandbox is replaced (the fleet's fault, not the code's: the job may have run)`
    return `stalled: the sandbox did not answer within ${limit}; it was stopped and is replaced (the fleet's fault, not a timeout of the code: the job may have run)`
  }

  static #expire<T>(deadline: JobDeadline<T>): void {
    if (deadline.answer()) deadline.onExpiry(deadline.of, deadline)
  }
}
