/**
 * A bounded FIFO of jobs waiting for a sandbox, with a deadline per job.
 *
 * - `push` refuses past the bound (the caller answers `overloaded`).
 * - `shift` returns the oldest live job; jobs whose deadline passed are handed to `onExpire`
 *   instead (the caller answers `queue_timeout`), never returned.
 * - `cancel` empties the slot in place; it is skipped later.
 * - Expiry needs no polling and no timer per job: one timer is armed for the earliest deadline
 *   of the jobs waiting, which a binary min-heap of their tickets keeps (push, shift, cancel and
 *   expiry are O(log n)). Deadlines do not follow FIFO order: a gateway gives each call what is
 *   left of its own budget, so a job retried from another runner may have less time than the
 *   jobs ahead of it, and it is still answered at its deadline, not when the head's passes.
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
  /** Per slot: where its ticket is in `#heap` (-1: not there). */
  #heapAt: Int32Array
  /** Tickets of the live jobs, a binary min-heap by deadline. */
  readonly #heap: Ticket[] = []
  #mask: number
  /** Sequence number of the oldest slot still held (live or cancelled). */
  #headSeq = 0
  /** Sequence number the next push gets. */
  #tailSeq = 0
  #live = 0
  #timer: NodeJS.Timeout | undefined
  #timerAt = Infinity
  #closed = false

  constructor(options: JobQueueOptions<T>) {
    this.#limit = options.limit
    this.#onExpire = options.onExpire
    this.#now = options.now ?? (() => performance.now())
    const capacity = Math.max(INITIAL_CAPACITY, 1)
    this.#items = new Array<T | undefined>(capacity).fill(undefined)
    this.#deadlines = new Float64Array(capacity)
    this.#heapAt = new Int32Array(capacity).fill(-1)
    this.#mask = capacity - 1
  }

  /** Live jobs waiting (cancelled and expired ones are not counted). */
  get length(): number {
    return this.#live
  }

  /** The bound given at construction. */
  get limit(): number {
    return this.#limit
  }

  /**
   * Appends a job that must not start after `deadlineAt` (same clock as `now`). Returns its
   * ticket, or `undefined` when the queue is full or closed.
   */
  push(item: T, deadlineAt: number): Ticket | undefined {
    if (this.#closed || this.#live >= this.#limit) return undefined
    if (this.#tailSeq - this.#headSeq > this.#mask) this.#grow()
    const seq = this.#tailSeq++
    const slot = seq & this.#mask
    this.#items[slot] = item
    this.#deadlines[slot] = deadlineAt
    this.#live++
    this.#heapPush(seq)
    if (deadlineAt < this.#timerAt) this.#arm(deadlineAt)
    return seq
  }

  /** Removes and returns the oldest live job whose deadline has not passed, or `undefined`. */
  shift(): T | undefined {
    if (this.#live === 0) return undefined
    const now = this.#now()
    while (this.#headSeq < this.#tailSeq) {
      const slot = this.#headSeq & this.#mask
      const item = this.#items[slot]
      this.#items[slot] = undefined
      this.#headSeq++
      if (item === undefined) continue
      this.#live--
      this.#heapRemove(slot)
      if (this.#deadlines[slot] < now) {
        this.#onExpire(item)
        continue
      }
      this.#compact()
      return item
    }
    this.#compact()
    return undefined
  }

  /** Removes a queued job. Returns false when it already left the queue (run, expired, cancelled). */
  cancel(ticket: Ticket): boolean {
    if (ticket < this.#headSeq || ticket >= this.#tailSeq) return false
    const slot = ticket & this.#mask
    if (this.#items[slot] === undefined) return false
    this.#items[slot] = undefined
    this.#live--
    this.#heapRemove(slot)
    this.#compact()
    return true
  }

  /** Removes every live job, oldest first, handing each to `fn`; the queue stays usable. */
  drain(fn: (item: T) => void): void {
    while (this.#headSeq < this.#tailSeq) {
      const slot = this.#headSeq & this.#mask
      const item = this.#items[slot]
      this.#items[slot] = undefined
      this.#headSeq++
      if (item !== undefined) {
        this.#live--
        this.#heapRemove(slot)
        fn(item)
      }
    }
    this.#compact()
  }

  /** Refuses new jobs and stops the timer; call {@link drain} to answer what is left. */
  close(): void {
    this.#closed = true
    this.#disarm()
  }

  /** Drops empty slots at the head and disarms the timer when nothing is left. */
  #compact(): void {
    while (this.#headSeq < this.#tailSeq && this.#items[this.#headSeq & this.#mask] === undefined) this.#headSeq++
    if (this.#live === 0) {
      this.#headSeq = this.#tailSeq
      this.#disarm()
    }
  }

  #grow(): void {
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
    this.#heapAt = new Int32Array(capacity).fill(-1)
    for (let i = 0; i < this.#heap.length; i++) this.#heapAt[this.#heap[i] & mask] = i
  }

  /** Arms the one timer for `deadlineAt`, replacing one armed for later. */
  #arm(deadlineAt: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timerAt = deadlineAt
    const delay = Math.max(0, Math.ceil(deadlineAt - this.#now()) + 1)
    this.#timer = setTimeout(this.#onTimer, delay)
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Infinity
  }

  /** Expires every job whose deadline passed, wherever it waits, then re-arms for the earliest left. */
  readonly #onTimer = (): void => {
    this.#timer = undefined
    this.#timerAt = Infinity
    const now = this.#now()
    while (this.#heap.length > 0) {
      const slot = this.#heap[0] & this.#mask
      if (this.#deadlines[slot] >= now) break
      const item = this.#items[slot] as T
      this.#items[slot] = undefined
      this.#live--
      this.#heapRemove(slot)
      this.#onExpire(item)
    }
    this.#compact()
    if (this.#live > 0 && !this.#closed) {
      const next = this.#deadlines[this.#heap[0] & this.#mask]
      if (next < this.#timerAt) this.#arm(next)
    }
  }

  #heapPush(seq: Ticket): void {
    this.#heap.push(seq)
    this.#heapAt[seq & this.#mask] = this.#heap.length - 1
    this.#siftUp(this.#heap.length - 1)
  }

  /** Takes the ticket in `slot` out of the heap (a no-op when it is not there). */
  #heapRemove(slot: number): void {
    const i = this.#heapAt[slot]
    if (i < 0) return
    this.#heapAt[slot] = -1
    const last = this.#heap.pop() as Ticket
    if (i === this.#heap.length) return
    this.#heap[i] = last
    this.#heapAt[last & this.#mask] = i
    this.#siftUp(i)
    this.#siftDown(this.#heapAt[last & this.#mask])
  }

  #before(a: Ticket, b: Ticket): boolean {
    const da = this.#deadlines[a & this.#mask]
    const db = this.#deadlines[b & this.#mask]
    return da < db || (da === db && a < b)
  }

  #place(i: number, seq: Ticket): void {
    this.#heap[i] = seq
    this.#heapAt[seq & this.#mask] = i
  }

  #siftUp(i: number): void {
    const heap = this.#heap
    const seq = heap[i]
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.#before(seq, heap[parent])) break
      this.#place(i, heap[parent])
      i = parent
    }
    this.#place(i, seq)
  }

  #siftDown(i: number): void {
    const heap = this.#heap
    const n = heap.length
    const seq = heap[i]
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && this.#before(heap[right], heap[left]) ? right : left
      if (!this.#before(heap[child], seq)) break
      this.#place(i, heap[child])
      i = child
    }
    this.#place(i, seq)
  }

  /** For tests and stats: the deadline the expiry timer is armed for (Infinity when none). */
  get nextExpiryAt(): number {
    return this.#timerAt
  }
}
