/**
 * Admission: the calls held at once are bounded by the memory they may take, not by a small
 * count. Each admitted call weighs {@link CALL_MEMORY_BYTES} plus its request's body, and the
 * calls held weigh at most a memory budget (`admissionMemoryMb`; by default a quarter of what the
 * process may use, at most half of V8's heap: {@link defaultAdmissionBytes}); `maxInFlight`, when
 * set, bounds their count too. Past either bound a request is answered 429 with `Retry-After`
 * before anything is queued. The pipeline's admission stage (pipeline.ts) takes a call route's
 * weight, as the route declares it (route-calls.ts: a batch its items), and frees it when the
 * response closes (sent, or the caller went away). A call admitted waits for a sandbox at most
 * the queue deadline (`queueTimeoutMs`) and is then answered `queue_timeout`, which says it
 * never ran.
 */
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import { getHeapStatistics } from 'node:v8'

/**
 * Gateway memory an admitted call holds besides its request body, rounded up: its connection's
 * buffers, the parsed request, the runner call and its result. A step of single calls through
 * `sandfleet serve` held ~22 KiB a call at 4,096 in flight (benchmarks/RESULTS.md).
 */
export const CALL_MEMORY_BYTES = 32 * 1024

/** The memory this process may use: its cgroup's limit (v2, then v1) when lower than the machine's. */
export function processMemoryLimitBytes(): number {
  let limit = totalmem()
  for (const file of ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes']) {
    try {
      const n = Number(readFileSync(file, 'utf8').trim())
      if (Number.isFinite(n) && n > 0) limit = Math.min(limit, n)
    } catch {
      /* no such controller here */
    }
  }
  return limit
}

/** The default memory budget of admission: a quarter of the process's memory limit, at most half of V8's heap limit. */
export function defaultAdmissionBytes(): number {
  return Math.floor(Math.min(processMemoryLimitBytes() / 4, getHeapStatistics().heap_size_limit / 2))
}

/** The in-flight counter, readable by metrics and readiness. */
export class Admission {
  /** Calls held at most: `maxInFlight`, or as many as the memory budget holds at {@link CALL_MEMORY_BYTES} each. */
  readonly limit: number
  /** Memory the calls held may weigh, bytes. */
  readonly memoryBytes: number
  #inFlight = 0
  #bytes = 0

  /** `maxInFlight` 0: no bound on the count but the memory's; `memoryBytes` default {@link defaultAdmissionBytes}. */
  constructor(maxInFlight: number, memoryBytes = defaultAdmissionBytes()) {
    this.memoryBytes = memoryBytes
    this.limit = maxInFlight > 0 ? maxInFlight : Math.max(1, Math.floor(memoryBytes / CALL_MEMORY_BYTES))
  }

  /** Calls held now. */
  get inFlight(): number {
    return this.#inFlight
  }

  /** Memory the calls held weigh now, bytes. */
  get bytes(): number {
    return this.#bytes
  }

  /**
   * Takes `weight` slots for calls whose request body is `bodyBytes`, or returns false when that
   * would pass a bound. A request is always admitted when nothing is held (it cannot starve).
   */
  tryAcquire(weight: number, bodyBytes = 0): boolean {
    const bytes = weight * CALL_MEMORY_BYTES + bodyBytes
    if ((this.#inFlight + weight > this.limit || this.#bytes + bytes > this.memoryBytes) && this.#inFlight > 0)
      return false
    this.#inFlight += weight
    this.#bytes += bytes
    return true
  }

  /** Gives back what `tryAcquire(weight, bodyBytes)` took. */
  release(weight: number, bodyBytes = 0): void {
    this.#inFlight -= weight
    this.#bytes -= weight * CALL_MEMORY_BYTES + bodyBytes
  }
}
