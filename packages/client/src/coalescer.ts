/**
 * Coalescing: single calls made within a short window travel together as one
 * `POST /v1/execute/batch` (rStar2-Agent's senders batch up to 64 calls the same way), so ten
 * thousand concurrent tool calls are a few hundred HTTP requests, not ten thousand.
 */
import type { BatchResponse, ExecRequest } from '@sandfleet/protocol'
import { abortedError } from './errors.ts'
import { isExecResult, resultFromError, resultFromFailure, type Attempt, type Transport } from './transport.ts'
import { CLIENT_ERROR_CODES } from './errors.ts'
import { failedResult } from '@sandfleet/protocol'

interface Pending {
  req: ExecRequest
  deadline: number
  signal: AbortSignal | undefined
  resolve: (a: Attempt) => void
  reject: (e: unknown) => void
  settled: boolean
}

/** Options of a {@link Coalescer}. */
export interface CoalescerOptions {
  /** How long the first call of a batch waits for company, in ms. */
  windowMs: number
  /** Most calls per batch; a full batch leaves at once. */
  maxBatch: number
}

/** Gathers single calls into batches; each caller still gets its own {@link Attempt}. */
export class Coalescer {
  private queue: Pending[] = []
  private timer: NodeJS.Timeout | undefined
  /** Batches and single requests sent so far. */
  readonly sent = { batches: 0, singles: 0 }

  /** A coalescer sending through `transport`. */
  constructor(
    private readonly transport: Transport,
    private readonly options: CoalescerOptions
  ) {}

  /** Queues one call; resolves with its attempt, rejects only when its signal aborts. */
  submit(req: ExecRequest, deadline: number, signal?: AbortSignal): Promise<Attempt> {
    return new Promise<Attempt>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortedError(signal.reason))
        return
      }
      const item: Pending = { req, deadline, signal, resolve, reject, settled: false }
      signal?.addEventListener(
        'abort',
        () => {
          if (item.settled) return
          item.settled = true
          reject(abortedError(signal.reason))
        },
        { once: true }
      )
      this.queue.push(item)
      if (this.queue.length >= this.options.maxBatch) this.flush()
      else if (this.timer === undefined) this.timer = setTimeout(() => this.flush(), this.options.windowMs)
    })
  }

  /** Sends everything queued now (in batches of at most `maxBatch`). */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    while (this.queue.length > 0) {
      const items = this.queue.splice(0, this.options.maxBatch).filter((i) => !i.settled)
      if (items.length === 1) void this.sendOne(items[0])
      else if (items.length > 1) void this.sendBatch(items)
    }
  }

  private settle(item: Pending, attempt: Attempt): void {
    if (item.settled) return
    item.settled = true
    item.resolve(attempt)
  }

  private async sendOne(item: Pending): Promise<void> {
    this.sent.singles++
    const signal = AbortSignal.timeout(Math.max(1, item.deadline - Date.now()))
    try {
      this.settle(item, await this.transport.execAttempt('/v1/execute', item.req, signal))
    } catch (err) {
      // execAttempt only throws for a caller's abort, which has no signal here
      this.settle(item, { result: resultFromFailure(err, false), retryAfterMs: 0, httpStatus: 0 })
    }
  }

  /**
   * Sends one coalesced batch with a streamed answer (NDJSON): each caller settles as soon as its
   * own line arrives, so one slow call never holds back the calls it travelled with. A server
   * answering plain JSON is read as a whole.
   */
  private async sendBatch(items: Pending[]): Promise<void> {
    this.sent.batches++
    const deadline = Math.max(...items.map((i) => i.deadline))
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()))
    const onLine = (raw: unknown): void => {
      const line = raw as { index?: unknown; result?: unknown } | null
      if (typeof line?.index !== 'number' || items[line.index] === undefined || !isExecResult(line.result)) return
      this.settle(items[line.index], { result: line.result, retryAfterMs: 0, httpStatus: 200 })
    }
    let rest: Attempt
    try {
      const ans = await this.transport.ndjson(
        '/v1/execute/batch',
        { requests: items.map((i) => i.req) },
        onLine,
        signal
      )
      if (ans.httpStatus >= 200 && ans.httpStatus < 300) {
        const results = (ans.body as Partial<BatchResponse> | null)?.results
        if (Array.isArray(results) && results.length === items.length)
          results.forEach((result, index) => onLine({ index, result }))
        rest = {
          result: failedResult(
            'infra_error',
            CLIENT_ERROR_CODES.BAD_RESPONSE,
            'the batch answer has no valid result for this item'
          ),
          retryAfterMs: 0,
          httpStatus: ans.httpStatus
        }
      } else {
        rest = {
          result: resultFromError(ans.httpStatus, ans.body),
          retryAfterMs: ans.retryAfterMs,
          httpStatus: ans.httpStatus
        }
      }
    } catch (err) {
      rest = { result: resultFromFailure(err, signal.aborted), retryAfterMs: 0, httpStatus: 0 }
    }
    for (const item of items) this.settle(item, rest)
  }

  /** Answers every queued call as aborted-by-close. */
  drain(reason: unknown): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    for (const item of this.queue.splice(0)) {
      if (!item.settled) {
        item.settled = true
        item.reject(reason)
      }
    }
  }
}
