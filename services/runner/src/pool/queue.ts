/**
 * A bounded FIFO of jobs waiting for a sandbox, with a deadline per job.
 *
 * - `push` is O(1) and refuses past the bound (the caller answers `overloaded`).
 * - `shift` is O(1) amortised: it returns the oldest live job; jobs whose deadline passed are
 *   handed to `onExpire` instead (the caller answers `queue_timeout`), never returned.
 * - `cancel` is O(1): the slot is emptied in place and skipped later.
 * - Expiry needs no polling and no timer per job: one timer is armed for the head's deadline.
 *   The runner gives every job the same queue timeout, so deadlines grow in FIFO order and that
 *   one timer is exact. A job whose deadline is earlier than a job ahead of it is still never
 *   returned after its deadline; it is expired when the timer or a `shift` reaches it.
 *
 * Storage is a ring buffer of power-of-two size that grows by doubling up to the bound; items
 * are addressed by a sequence number (the ticket), so no wrapper object is allocated per job.
 */

/** A queued job's ticket: pass it to {@link JobQueue.cancel}. */
export type Ticket = number

/** Options of a {@link JobQueue}. */
export interface JobQueueOptions<T> {
  /** Most live jobs held; `push` beyond it returns `undefined`. */
  limit: number
  /** Called (synchronously, once) for each job that waited past its deadline. */
  onExpire: (item: T) => void
  /** Clock in milliseconds; defaults to `performance.now`. */
  now?: () => number
}

const INITIAL_CAPACITY = 64

/** Bounded FIFO with per-job deadlines; see the module comment. */
export class JobQueue<T> {
  readonly #limit: number
  readonly #onExpire: (item: T) => void
  readonly #now: () => number
  #items: Array<T | undefined>
  #deadlines: Float64Array
  #mask: number
  /** Sequence number of the oldest slot still held (live or cancelled). */
  #headSeq = 0
  /** Sequence number the next push gets. */
  #tailSeq = 0
  #live = 0
  #timer: NodeJS.Timeout | undefined
  #timerAt = Infinity
  #closed = false

  constructor (options: JobQueueOptions<T>) {
    this.#limit = options.limit
    this.#onExpire = options.onExpire
    this.#now = options.now ?? (() => performance.now())
    const capacity = Math.max(INITIAL_CAPACITY, 1)
    this.#items = new Array<T | undefined>(capacity).fill(undefined)
    this.#deadlines = new Float64Array(capacity)
    this.#mask = capacity - 1
  }

  /** Live jobs waiting (cancelled and expired ones are not counted). */
  get length (): number {
    return this.#live
  }

  /** The bound given at construction. */
  get limit (): number {
    return this.#limit
  }

  /**
   * Appends a job that must not start after `deadlineAt` (same clock as `now`). Returns its
   * ticket, or `undefined` when the queue is full or closed.
   */
  push (item: T, deadlineAt: number): Ticket | undefined {
    if (this.#closed || this.#live >= this.#limit) return undefined
    if (this.#tailSeq - this.#headSeq > this.#mask) this.#grow()
    const seq = this.#tailSeq++
    const slot = seq & this.#mask
    this.#items[slot] = item
    this.#deadlines[slot] = deadlineAt
    this.#live++
    if (this.#timer === undefined) this.#arm(deadlineAt)
    return seq
  }

  /** Removes and returns the oldest live job whose deadline has not passed, or `undefined`. */
  shift (): T | undefined {
    if (this.#live === 0) return undefined
    const now = this.#now()
    while (this.#headSeq < this.#tailSeq) {
      const slot = this.#headSeq & this.#mask
      const item = this.#items[slot]
      this.#items[slot] = undefined
      this.#headSeq++
      if (item === undefined) continue
      this.#live--
      if (this.#deadlines[slot] < now) { this.#onExpire(item); continue }
      this.#compact()
      return item
    }
    return undefined
  }

  /** Removes a queued job. Returns false when it already left the queue (run, expired, cancelled). */
  cancel (ticket: Ticket): boolean {
    if (ticket < this.#headSeq || ticket >= this.#tailSeq) return false
    const slot = ticket & this.#mask
    if (this.#items[slot] === undefined) return false
    this.#items[slot] = undefined
    this.#live--
    this.#compact()
    return true
  }

  /** Removes every live job, oldest first, handing each to `fn`; the queue stays usable. */
  drain (fn: (item: T) => void): void {
    while (this.#headSeq < this.#tailSeq) {
      const slot = this.#headSeq & this.#mask
      const item = this.#items[slot]
      this.#items[slot] = undefined
      this.#headSeq++
      if (item !== undefined) { this.#live--; fn(item) }
    }
    this.#compact()
  }

  /** Refuses new jobs and stops the timer; call {@link drain} to answer what is left. */
  close (): void {
    this.#closed = true
    this.#disarm()
  }

  /** Drops empty slots at the head and disarms the timer when nothing is left. */
  #compact (): void {
    while (this.#headSeq < this.#tailSeq && this.#items[this.#headSeq & this.#mask] === undefined) this.#headSeq++
    if (this.#live === 0) {
      this.#headSeq = this.#tailSeq
      this.#disarm()
    }
  }

  #grow (): void {
    const oldMask = this.#mask
    const capacity = (oldMask + 1) * 2
    const items = new Array<T | undefined>(capacity).fill(undefined)
    const deadlines = new Float64Array(capacity)
    const mask = capacity - 1
    for (let seq = this.#headSeq; seq < this.#tailSeq; seq++) {
      items[seq & mask] = this.#items[seq & oldMask]
      deadlines[seq & mask] = this.#deadlines[seq & oldMask]
    }
    this.#items = items
    this.#deadlines = deadlines
    this.#mask = mask
  }

  #arm (deadlineAt: number): void {
    this.#timerAt = deadlineAt
    const delay = Math.max(0, Math.ceil(deadlineAt - this.#now()) + 1)
    this.#timer = setTimeout(this.#onTimer, delay)
  }

  #disarm (): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Infinity
  }

  /** Expires every job at the head whose deadline passed, then re-arms for the new head. */
  readonly #onTimer = (): void => {
    this.#timer = undefined
    this.#timerAt = Infinity
    const now = this.#now()
    while (this.#headSeq < this.#tailSeq) {
      const slot = this.#headSeq & this.#mask
      const item = this.#items[slot]
      if (item === undefined) { this.#headSeq++; continue }
      if (this.#deadlines[slot] >= now) break
      this.#items[slot] = undefined
      this.#headSeq++
      this.#live--
      this.#onExpire(item)
    }
    this.#compact()
    if (this.#live > 0 && !this.#closed && this.#timer === undefined) {
      this.#arm(this.#deadlines[this.#headSeq & this.#mask])
    }
  }

  /** For tests and stats: the deadline the expiry timer is armed for (Infinity when none). */
  get nextExpiryAt (): number {
    return this.#timerAt
  }
}
