/**
 * {@link SandfleetClient}: the one object a trainer or agent holds to talk to a fleet.
 * Single calls are coalesced into batches, retriable statuses retried within the deadline (those
 * whose code surely did not run; with `retryMaybeRan`, also those that may have, under the same
 * `request_id`), and every call resolves with an {@link ExecResult} whose `status` says what
 * happened; a judge with a {@link JudgeResult} whose `verdict` does (judge.ts).
 */
import { randomUUID } from 'node:crypto'
import {
  GRACES,
  LIMITS,
  failedResult,
  timeoutMsOf,
  isRetriable,
  type BatchStreamLine,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type Language
} from '@sandfleet/protocol'
import { DEFAULT_RETRY, backoffDelayMs, sleep, type RetryPolicy } from './backoff.ts'
import type { CallOptions } from './call-options.ts'
import { Coalescer } from './coalescer.ts'
import { ClientError, CLIENT_ERROR_CODES, abortedError, closedError } from './errors.ts'
import { Judges } from './judge.ts'
import { retriableResult, withRetries, type RetryPredicate, type RetryStats } from './retry.ts'
import { Session } from './session.ts'
import { isExecResult, resultFromError, resultFromFailure, Transport } from './transport.ts'

/** Options of a {@link SandfleetClient}; only `url` is required. */
export interface ClientOptions {
  /** Base URL of the fleet's gateway, e.g. `http://127.0.0.1:8080`. */
  url: string
  /** Keep-alive connections (default 32). Size it to the fleet's gateways, not to the call count. */
  connections?: number
  /** Most HTTP requests in flight (default 256); more calls wait in the client. */
  maxConcurrency?: number
  /** Window in which single calls are gathered into one batch, ms (default 2; 0 turns coalescing off). */
  batchWindowMs?: number
  /** Most calls per coalesced batch (default 64). */
  maxBatch?: number
  /** Retry policy (defaults: 6 attempts, 50 ms base, 2 s cap). */
  retry?: Partial<RetryPolicy>
  /**
   * Also retry fleet answers whose code may have run (`infra_error` with `maybe_ran` true or absent, a connection
   * lost mid-call); default false: only what surely did not run is retried, so a call never runs twice. When true,
   * each call carries a `request_id` (one is made when it has none) and a retry sends it again with the runner that
   * had it (`x-sandfleet-runner`), so while that runner lives it answers with its first run (`replayed`) instead of
   * running again; a runner that died may have run it (at least once).
   */
  retryMaybeRan?: boolean
  /**
   * Time a call may take beyond its own `timeout_ms`, queueing and retries included (default
   * 30 000 ms). Keep it above the gateway's `queueTimeoutMs` + `callGraceMs` (25 000 ms by
   * default): below, a call still waiting in a queue is given up here (`SF_ERR_CLIENT_DEADLINE`)
   * before the fleet can answer its `queue_timeout`.
   */
  deadlineSlackMs?: number
  /** Sent as `authorization: Bearer <apiKey>`. */
  apiKey?: string
  /** Extra headers on every request. */
  headers?: Record<string, string>
}

/** Options of a new session. */
export interface SessionOptions {
  language?: Language
  /** Idle time after which the fleet reaps the session, seconds. */
  ttl_s?: number
  memory_mb?: number
}

/** Lifecycle of a client. */
export type ClientState = 'open' | 'closed'

/** The client of a sandfleet fleet's public HTTP API. */
export class SandfleetClient {
  /** Retry counters (calls, attempts, retries). */
  readonly stats: RetryStats = { calls: 0, attempts: 0, retries: 0 }
  private readonly transport: Transport
  private readonly coalescer: Coalescer | undefined
  private readonly policy: RetryPolicy
  private readonly slackMs: number
  private readonly retryMaybeRan: boolean
  private readonly retriable: RetryPredicate
  private readonly judges: Judges
  private stateValue: ClientState = 'open'

  /** A client; it connects lazily. Call {@link close} when done. */
  constructor(options: ClientOptions) {
    const headers: Record<string, string> = { ...(options.headers ?? {}) }
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`
    this.transport = new Transport({
      url: options.url,
      connections: options.connections ?? 32,
      maxConcurrency: options.maxConcurrency ?? 256,
      headers
    })
    const windowMs = options.batchWindowMs ?? 2
    if (windowMs > 0)
      this.coalescer = new Coalescer(this.transport, {
        windowMs,
        maxBatch: Math.min(options.maxBatch ?? 64, LIMITS.maxBatchItems)
      })
    this.policy = { ...DEFAULT_RETRY, ...(options.retry ?? {}) }
    this.slackMs = options.deadlineSlackMs ?? GRACES.clientSlackMs
    this.retryMaybeRan = options.retryMaybeRan === true
    this.retriable = retriableResult(this.retryMaybeRan)
    this.judges = new Judges({
      transport: this.transport,
      policy: this.policy,
      stats: this.stats,
      slackMs: this.slackMs,
      retryMaybeRan: this.retryMaybeRan
    })
  }

  /** `req` as it is sent: with a request_id of its own when retries may repeat a call that ran. */
  private identified(req: ExecRequest): ExecRequest {
    return this.retryMaybeRan && req.request_id === undefined ? { ...req, request_id: randomUUID() } : req
  }

  /** `open` or `closed`. */
  get state(): ClientState {
    return this.stateValue
  }

  /** Batches and single requests the coalescer has sent. */
  get coalesced(): { batches: number; singles: number } {
    return this.coalescer ? { ...this.coalescer.sent } : { batches: 0, singles: 0 }
  }

  private deadlineFor(reqs: ExecRequest[], options: CallOptions): number {
    const longest = Math.max(...reqs.map(timeoutMsOf))
    return Date.now() + (options.deadlineMs ?? longest + this.slackMs)
  }

  private checkOpen(): void {
    if (this.stateValue !== 'open') throw closedError()
  }

  /**
   * Runs one tool call. Resolves with its result whatever the status (a fleet status left after
   * the retries is returned, not thrown); rejects only on abort or a closed client.
   */
  async execute(req: ExecRequest, options: CallOptions = {}): Promise<ExecResult> {
    this.checkOpen()
    const deadline = this.deadlineFor([req], options)
    const signal = options.signal
    const sent = this.identified(req)
    return await withRetries(
      async (attemptSignal, last) => {
        // a retry goes to the runner that had the call, which answers it from its first run while it lives
        const runner = last === undefined || last.runner === '' ? undefined : last.runner
        if (this.coalescer && sent.session_id === undefined && runner === undefined)
          return await this.coalescer.submit(sent, deadline, signal)
        return await this.transport.execAttempt('/v1/execute', sent, attemptSignal, signal, runner)
      },
      { policy: this.policy, deadline, stats: this.stats, retriable: this.retriable, ...(signal ? { signal } : {}) }
    )
  }

  /**
   * Runs many calls as explicit batches (`POST /v1/execute/batch`, chunks of at most 1024);
   * results in request order. Items that come back retriable are re-sent together.
   */
  async executeBatch(reqs: ExecRequest[], options: CallOptions = {}): Promise<ExecResult[]> {
    this.checkOpen()
    if (reqs.length === 0) return []
    const chunks: ExecRequest[][] = []
    for (let i = 0; i < reqs.length; i += LIMITS.maxBatchItems) chunks.push(reqs.slice(i, i + LIMITS.maxBatchItems))
    const deadline = this.deadlineFor(reqs, options)
    const parts = await Promise.all(
      chunks.map(
        async (chunk) =>
          await this.batchRounds(
            chunk.map((r) => this.identified(r)),
            deadline,
            options.signal
          )
      )
    )
    return parts.flat()
  }

  private async batchRounds(reqs: ExecRequest[], deadline: number, signal?: AbortSignal): Promise<ExecResult[]> {
    const results: ExecResult[] = new Array(reqs.length)
    let pending = reqs.map((_, i) => i)
    this.stats.calls += reqs.length
    for (let round = 1; pending.length > 0; round++) {
      if (signal?.aborted) throw abortedError(signal.reason)
      const remaining = deadline - Date.now()
      if (remaining <= 0) {
        for (const i of pending) results[i] ??= resultFromFailure(undefined, true)
        break
      }
      const timeout = AbortSignal.timeout(remaining)
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
      this.stats.attempts += pending.length
      let retryAfterMs = 0
      let got: ExecResult[]
      try {
        const ans = await this.transport.json(
          'POST',
          '/v1/execute/batch',
          { requests: pending.map((i) => reqs[i]) },
          combined
        )
        retryAfterMs = ans.retryAfterMs
        const list = (ans.body as { results?: unknown[] } | null)?.results
        if (ans.httpStatus >= 300) got = pending.map(() => resultFromError(ans.httpStatus, ans.body))
        else if (!Array.isArray(list) || list.length !== pending.length)
          got = pending.map(() =>
            failedResult(
              'infra_error',
              CLIENT_ERROR_CODES.BAD_RESPONSE,
              'the batch answer does not hold one result per request'
            )
          )
        else
          got = list.map((r) =>
            isExecResult(r) ? r : failedResult('infra_error', CLIENT_ERROR_CODES.BAD_RESPONSE, 'not an ExecResult')
          )
      } catch (err) {
        if (signal?.aborted) throw abortedError(err)
        got = pending.map(() => resultFromFailure(err, timeout.aborted))
      }
      const again: number[] = []
      pending.forEach((i, k) => {
        results[i] = got[k]
        if (this.retriable(got[k]) && round < this.policy.maxAttempts) again.push(i)
      })
      if (again.length === 0) break
      const delay = backoffDelayMs(this.policy, round, retryAfterMs)
      if (Date.now() + delay >= deadline) break
      try {
        await sleep(delay, signal)
      } catch (err) {
        throw abortedError(err)
      }
      this.stats.retries += again.length
      pending = again
    }
    return results
  }

  /**
   * Runs a batch with a streamed answer (`Accept: application/x-ndjson`): yields each item as
   * soon as it has its final result (completion order). Retriable items are re-sent after the
   * stream ends and yielded when they settle.
   */
  async *streamBatch(reqs: ExecRequest[], options: CallOptions = {}): AsyncGenerator<BatchStreamLine> {
    this.checkOpen()
    if (reqs.length === 0) return
    if (reqs.length > LIMITS.maxBatchItems)
      throw new RangeError(`a streamed batch holds at most ${LIMITS.maxBatchItems} requests`)
    const deadline = this.deadlineFor(reqs, options)
    const signal = options.signal
    const sent = reqs.map((r) => this.identified(r))
    let pending = reqs.map((_, i) => i)
    this.stats.calls += reqs.length
    for (let round = 1; pending.length > 0; round++) {
      if (signal?.aborted) throw abortedError(signal.reason)
      const remaining = deadline - Date.now()
      if (remaining <= 0) {
        for (const index of pending) yield { index, result: resultFromFailure(undefined, true) }
        return
      }
      const last = round >= this.policy.maxAttempts
      const timeout = AbortSignal.timeout(remaining)
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
      this.stats.attempts += pending.length
      const ready: BatchStreamLine[] = []
      const seen = new Set<number>()
      const again: number[] = []
      let wake: (() => void) | undefined
      const order = pending
      const onLine = (raw: unknown): void => {
        const line = raw as Partial<BatchStreamLine>
        if (typeof line?.index !== 'number' || !isExecResult(line.result) || order[line.index] === undefined) return
        const index = order[line.index]
        seen.add(line.index)
        if (this.retriable(line.result) && !last) again.push(index)
        else ready.push({ index, result: line.result })
        wake?.()
      }
      let done = false
      let failure: ExecResult | undefined
      let retryAfterMs = 0
      const stream = this.transport
        .ndjson('/v1/execute/batch', { requests: pending.map((i) => sent[i]) }, onLine, combined)
        .then(
          (ans) => {
            retryAfterMs = ans.retryAfterMs
            if (ans.httpStatus >= 300) failure = resultFromError(ans.httpStatus, ans.body)
            else if (ans.body !== null) {
              // a server that ignored Accept and answered plain JSON
              const list = (ans.body as { results?: unknown[] }).results
              if (Array.isArray(list)) list.forEach((result, index) => onLine({ index, result }))
            }
          },
          (err) => {
            if (!signal?.aborted) failure = resultFromFailure(err, timeout.aborted)
          }
        )
        .finally(() => {
          done = true
          wake?.()
        })
      while (true) {
        while (ready.length > 0) yield ready.shift() as BatchStreamLine
        if (done) break
        await new Promise<void>((resolve) => {
          wake = resolve
        })
        wake = undefined
      }
      await stream
      if (signal?.aborted) throw abortedError(signal.reason)
      order.forEach((index, k) => {
        // items the stream never answered
        if (seen.has(k)) return
        const result =
          failure ?? failedResult('infra_error', CLIENT_ERROR_CODES.BAD_RESPONSE, 'the stream ended without this item')
        if (this.retriable(result) && !last) again.push(index)
        else ready.push({ index, result })
      })
      while (ready.length > 0) yield ready.shift() as BatchStreamLine
      if (again.length === 0) return
      const delay = backoffDelayMs(this.policy, round, retryAfterMs)
      if (Date.now() + delay >= deadline) {
        for (const index of again) yield { index, result: failure ?? resultFromFailure(undefined, true) }
        return
      }
      try {
        await sleep(delay, signal)
      } catch (err) {
        throw abortedError(err)
      }
      this.stats.retries += again.length
      pending = again
    }
  }

  /**
   * Judges one program against its tests in one sandbox (`POST /v1/judge`). Resolves with its result whatever the
   * verdict: the fleet's verdicts are retried within the deadline (the judge's own bound, `judgeTimeBoundMs`, plus
   * `deadlineSlackMs`) and a last one returned, not thrown; rejects only on abort or a closed client.
   *
   * @example
   * ```ts
   * const r = await client.judge({ language: 'cpp', code, tests: [{ stdin: '1 2', expected: '3' }] })
   * const reward = r.verdict === 'accepted' ? 1 : 0
   * ```
   */
  async judge(request: JudgeRequest, options: CallOptions = {}): Promise<JudgeResult> {
    this.checkOpen()
    return await this.judges.judge(request, options)
  }

  /**
   * Judges many programs (`POST /v1/judge/batch`, chunks of at most 1024); results in request order, judges with a
   * fleet verdict re-sent together.
   */
  async judgeBatch(requests: JudgeRequest[], options: CallOptions = {}): Promise<JudgeResult[]> {
    this.checkOpen()
    return await this.judges.judgeBatch(requests, options)
  }

  /** Opens a session (`POST /v1/sessions`), retrying `overloaded` like any call. */
  async createSession(options: SessionOptions = {}, call: CallOptions = {}): Promise<Session> {
    this.checkOpen()
    const deadline = Date.now() + (call.deadlineMs ?? this.slackMs)
    const body = {
      language: options.language ?? 'python',
      ...(options.ttl_s !== undefined ? { ttl_s: options.ttl_s } : {}),
      ...(options.memory_mb !== undefined ? { memory_mb: options.memory_mb } : {})
    }
    for (let n = 1; ; n++) {
      if (call.signal?.aborted) throw abortedError(call.signal.reason)
      let ans
      try {
        ans = await this.transport.json(
          'POST',
          '/v1/sessions',
          body,
          call.signal
            ? AbortSignal.any([call.signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))])
            : AbortSignal.timeout(Math.max(1, deadline - Date.now()))
        )
      } catch (err) {
        if (call.signal?.aborted) throw abortedError(err)
        ans = { httpStatus: 0, retryAfterMs: 0, body: null, err }
      }
      const id = (ans.body as { session_id?: unknown } | null)?.session_id
      if (ans.httpStatus >= 200 && ans.httpStatus < 300 && typeof id === 'string') {
        return new Session(id, this.transport, {
          policy: this.policy,
          stats: this.stats,
          deadlineSlackMs: this.slackMs
        })
      }
      const result =
        ans.httpStatus === 0
          ? resultFromFailure((ans as { err?: unknown }).err, false)
          : resultFromError(ans.httpStatus, ans.body)
      const delay = backoffDelayMs(this.policy, n, ans.retryAfterMs)
      if (!isRetriable(result.status) || n >= this.policy.maxAttempts || Date.now() + delay >= deadline) {
        throw new ClientError(
          CLIENT_ERROR_CODES.SESSION_REQUEST,
          `could not create a session: ${result.status}: ${result.error?.message ?? ''}`,
          ans.httpStatus || 502,
          { result }
        )
      }
      await sleep(delay, call.signal)
    }
  }

  /** Closes the client: queued coalesced calls reject, connections close. Safe to call twice. */
  async close(): Promise<void> {
    if (this.stateValue === 'closed') return
    this.stateValue = 'closed'
    this.coalescer?.drain(closedError())
    await this.transport.close()
  }
}
