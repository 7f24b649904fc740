/**
 * The wire: one undici `Pool` to the fleet, the `request` API, a concurrency limit, and the
 * mapping of every HTTP answer (2xx, ErrorBody, garbage, a dropped connection) to results.
 */
import { Pool } from 'undici'
import {
  FLEET_STATUSES,
  GATEWAY_HEADERS,
  failedResult,
  type ErrorBody,
  type ExecResult,
  type Status,
  STATUSES
} from '@sandfleet/protocol'
import { readNdjson } from '@sandfleet/protocol/http'
import { parseRetryAfterMs } from './backoff.ts'
import { CLIENT_ERROR_CODES, abortedError } from './errors.ts'
import { Limiter } from './limiter.ts'

/** One attempt's outcome: the result, the fleet's Retry-After and the HTTP status it came with. */
export interface Attempt {
  result: ExecResult
  /** From a `Retry-After` header, 0 when none. */
  retryAfterMs: number
  /** HTTP status of the answer; 0 when no answer arrived. */
  httpStatus: number
}

/** A raw JSON answer. */
export interface JsonAnswer {
  httpStatus: number
  retryAfterMs: number
  body: unknown
}

/** Options of a {@link Transport}. */
export interface TransportOptions {
  /** Base URL of the fleet's gateway (`http://127.0.0.1:8080`). */
  url: string
  /** Keep-alive connections in the pool. */
  connections: number
  /** Most HTTP requests in flight at once. */
  maxConcurrency: number
  /** Extra headers on every request (authorization, …). */
  headers: Record<string, string>
}

const statusSet: ReadonlySet<string> = new Set(STATUSES)
const fleetSet: ReadonlySet<string> = new Set(FLEET_STATUSES)

/**
 * The codes of a connection that was never made (refused, unreachable, no such host, the connect itself timed out):
 * the request never left, so nothing ran.
 */
const NEVER_SENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT'
])

/** True when `err` (undici's, or one it caused) says the connection was never made. */
export function neverSent(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e != null && depth < 4; depth++) {
    if (typeof e.code === 'string' && NEVER_SENT.has(e.code)) return true
    e = e.cause as typeof e
  }
  return false
}

/** True when `body` has the {@link ErrorBody} shape. */
export function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  const e = b.error as Record<string, unknown> | undefined
  return (
    typeof b.status === 'string' &&
    statusSet.has(b.status) &&
    typeof e === 'object' &&
    e !== null &&
    typeof e.code === 'string' &&
    typeof e.message === 'string'
  )
}

/** True when `body` looks like an {@link ExecResult} (status from the closed set, output strings). */
export function isExecResult(body: unknown): body is ExecResult {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  return (
    typeof b.status === 'string' &&
    statusSet.has(b.status) &&
    typeof b.stdout === 'string' &&
    typeof b.stderr === 'string'
  )
}

/**
 * The result standing for a non-2xx answer: the ErrorBody's status and code, or infra_error. The fleet refused the
 * whole request, so a fleet status says nothing ran (`maybe_ran: false`), but for a session lost (410: its cell may
 * have).
 */
export function resultFromError(httpStatus: number, body: unknown): ExecResult {
  if (isErrorBody(body)) {
    const extra: Partial<ExecResult> = {}
    if (body.error.field !== undefined)
      extra.error = { type: body.error.code, message: `${body.error.message} (field: ${body.error.field})` }
    if (fleetSet.has(body.status) && httpStatus !== 410) extra.maybe_ran = false
    return failedResult(body.status, body.error.code, body.error.message, extra)
  }
  const status: Status = httpStatus === 429 ? 'overloaded' : 'infra_error'
  return failedResult(status, CLIENT_ERROR_CODES.BAD_RESPONSE, `HTTP ${httpStatus} without an ErrorBody`)
}

/**
 * The result of a call whose connection failed or whose deadline passed in flight: it may have run (`maybe_ran`),
 * unless its connection was never made.
 */
export function resultFromFailure(err: unknown, deadlinePassed: boolean): ExecResult {
  if (deadlinePassed)
    return failedResult(
      'infra_error',
      CLIENT_ERROR_CODES.DEADLINE,
      "the call's deadline passed before the fleet answered",
      { maybe_ran: true }
    )
  const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  return failedResult('infra_error', CLIENT_ERROR_CODES.CONNECTION, message, { maybe_ran: !neverSent(err) })
}

/** A connection pool to one fleet gateway. */
export class Transport {
  private readonly pool: Pool
  private readonly limiter: Limiter
  private readonly headers: Record<string, string>
  private readonly basePath: string

  /** Opens nothing yet: connections are made on demand and kept alive. */
  constructor(options: TransportOptions) {
    const url = new URL(options.url)
    this.basePath = url.pathname.replace(/\/$/, '')
    this.pool = new Pool(url.origin, {
      connections: options.connections,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0
    })
    this.limiter = new Limiter(options.maxConcurrency)
    this.headers = options.headers
  }

  /** HTTP requests in flight and waiting for a slot. */
  get load(): { active: number; pending: number } {
    return { active: this.limiter.active, pending: this.limiter.pending }
  }

  /**
   * Sends one request and reads a JSON answer. Rejects with the undici error when no answer
   * arrived (connection refused, reset, aborted), so callers decide how to classify it.
   */
  async json(
    method: 'POST' | 'DELETE' | 'GET',
    path: string,
    body: unknown,
    signal?: AbortSignal,
    extraHeaders?: Record<string, string>
  ): Promise<JsonAnswer> {
    return await this.limiter.run(async () => {
      const res = await this.pool.request({
        method,
        path: this.basePath + path,
        headers: {
          ...this.headers,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          accept: 'application/json',
          ...extraHeaders
        },
        body: body === undefined ? null : JSON.stringify(body),
        signal: signal ?? null
      })
      const text = await res.body.text()
      let parsed: unknown = null
      if (text.length > 0) {
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = text
        }
      }
      return { httpStatus: res.statusCode, retryAfterMs: parseRetryAfterMs(res.headers['retry-after']), body: parsed }
    })
  }

  /**
   * Sends one request whose answer is NDJSON and hands each parsed line to `onLine` as it
   * arrives. A non-2xx answer is read as JSON and returned instead.
   */
  async ndjson(
    path: string,
    body: unknown,
    onLine: (line: unknown) => void,
    signal?: AbortSignal
  ): Promise<JsonAnswer> {
    return await this.limiter.run(async () => {
      const res = await this.pool.request({
        method: 'POST',
        path: this.basePath + path,
        headers: { ...this.headers, 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify(body),
        signal: signal ?? null
      })
      const retryAfterMs = parseRetryAfterMs(res.headers['retry-after'])
      const type = String(res.headers['content-type'] ?? '')
      if (res.statusCode >= 300 || !type.includes('ndjson')) {
        const text = await res.body.text()
        let parsed: unknown = text
        try {
          parsed = JSON.parse(text)
        } catch {}
        return { httpStatus: res.statusCode, retryAfterMs, body: parsed }
      }
      await readNdjson(res.body, onLine)
      return { httpStatus: res.statusCode, retryAfterMs, body: null }
    })
  }

  /**
   * Posts an {@link ExecRequest}-shaped body and maps whatever happens to an {@link Attempt}:
   * it never rejects except when `callerSignal` aborted. `runner`: the runner that had the call
   * (a retry's), sent as `GATEWAY_HEADERS.runner`.
   */
  async execAttempt(
    path: string,
    body: unknown,
    signal: AbortSignal,
    callerSignal?: AbortSignal,
    runner?: string
  ): Promise<Attempt> {
    try {
      const headers = runner === undefined ? undefined : { [GATEWAY_HEADERS.runner]: runner }
      const ans = await this.json('POST', path, body, signal, headers)
      if (ans.httpStatus >= 200 && ans.httpStatus < 300) {
        if (isExecResult(ans.body))
          return { result: ans.body, retryAfterMs: ans.retryAfterMs, httpStatus: ans.httpStatus }
        return {
          result: failedResult(
            'infra_error',
            CLIENT_ERROR_CODES.BAD_RESPONSE,
            'the fleet answered 2xx with a body that is not an ExecResult'
          ),
          retryAfterMs: 0,
          httpStatus: ans.httpStatus
        }
      }
      return {
        result: resultFromError(ans.httpStatus, ans.body),
        retryAfterMs: ans.retryAfterMs,
        httpStatus: ans.httpStatus
      }
    } catch (err) {
      if (callerSignal?.aborted) throw abortedError(err)
      return { result: resultFromFailure(err, signal.aborted), retryAfterMs: 0, httpStatus: 0 }
    }
  }

  /** Closes every connection; safe to call twice. */
  async close(): Promise<void> {
    if (this.pool.closed || this.pool.destroyed) return
    await this.pool.close()
  }
}
