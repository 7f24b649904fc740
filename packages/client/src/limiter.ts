/** A counting semaphore bounding how many HTTP requests a client has in flight. */

/** Runs at most `limit` tasks at once; the others wait in arrival order. */
export class Limiter {
  /** Most tasks running at once. */
  readonly limit: number
  private running = 0
  private readonly waiting: Array<() => void> = []

  /** A limiter allowing `limit` (≥ 1) concurrent tasks. */
  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`)
    this.limit = limit
  }

  /** Tasks running now. */
  get active(): number {
    return this.running
  }
  /** Tasks waiting for a slot. */
  get pending(): number {
    return this.waiting.length
  }

  /** Runs `task` when a slot is free and releases the slot when it settles. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      return await task()
    } finally {
      const next = this.waiting.shift()
      if (next)
        next() // the slot passes straight to the next task
      else this.running--
    }
  }
}
