/** A {@link RunnerClient} over the runner's internal HTTP API, on a keep-alive undici Pool. */
import { Client, Pool } from 'undici'
import {
  GRACES,
  LIMITS,
  NDJSON,
  QUEUE_TIMEOUT_MS,
  RUNNER_HEADERS,
  RUNNER_PATHS,
  RUNNER_SESSION_PATHS,
  JUDGE_VERDICTS,
  budgetLeft,
  contextHeaders,
  failedJudgeResult,
  failedResult,
  isRetriable,
  judgeTimeBoundMs,
  timeoutMsOf,
  type CallContext,
  type ExecRequest,
  type ExecResult,
  type JudgeBatchResultListener,
  type JudgeRequest,
  type JudgeResult,
  type JudgeVerdict,
  type RunnerInfo,
  type RunnerLoad,
  type SessionCreateRequest,
  type SessionExecRequest,
  type SessionInfo,
  type Status
} from '@sandfleet/protocol'
import { readNdjson } from '@sandfleet/protocol/http'
import { GatewayError } from '../errors.ts'
import { httpRunnerSandboxes } from './http-runner-sandboxes.ts'
import type { BatchResultListener, RunnerClient, RunnerSandboxes, RunnerSessions } from './runner-client.ts'
import { requestJson } from './runner-request.ts'
import { callRunnerJson, idPath, unreachable } from './runner-json.ts'

const SESSION_KEY_HEADER = RUNNER_HEADERS.sessionKey

/** Options of {@link HttpRunnerClient}. */
export interface HttpRunnerClientOptions {
  /** Keep-alive connections kept to this runner. */
  connections?: number
  /**
   * How long a call whose context has no deadline may wait for a sandbox, as far as this client
   * waits for it (the runner's own `queueTimeoutMs` bounds it); default the protocol's `QUEUE_TIMEOUT_MS`.
   */
  queueTimeoutMs?: number
  /**
   * Added to a call's queue budget and `timeout_ms` before the HTTP call is given up (the
   * runner's own grace, transport); default the protocol's `GRACES.callMs`.
   */
  graceMs?: number
  /**
   * The fleet's shared secret: every request carries `Authorization: Bearer SECRET`, which a
   * runner with the same `runnerSecret` asks for (empty or absent: no header).
   */
  secret?: string
}

function isResult(v: unknown): v is ExecResult {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as ExecResult).status === 'string' &&
    typeof (v as ExecResult).stdout === 'string'
  )
}

/**
 * Turns any runner answer (a result, or an ErrorBody for a refused call) into a result. A refusal is of the whole
 * request, before anything ran: a fleet status says so (`maybe_ran: false`).
 */
function toResult(statusCode: number, data: unknown): ExecResult {
  if (isResult(data)) return data
  const body = data as { status?: Status; error?: { code?: string; message?: string } } | null
  if (
    body !== null &&
    typeof body === 'object' &&
    typeof body.status === 'string' &&
    typeof body.error?.code === 'string'
  ) {
    const refused = failedResult(body.status, body.error.code, body.error.message ?? '')
    if (isRetriable(body.status)) refused.maybe_ran = false
    return refused
  }
  throw new GatewayError('SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE', `runner answered HTTP ${statusCode} without a result`)
}

function isJudgeResult(v: unknown): v is JudgeResult {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as JudgeResult).verdict === 'string' &&
    Array.isArray((v as JudgeResult).tests)
  )
}

const VERDICTS: ReadonlySet<string> = new Set(JUDGE_VERDICTS)

/** Turns any runner answer to a judge (its result, or an ErrorBody for a refused call) into a judge result. */
function toJudgeResult(statusCode: number, data: unknown, language: string): JudgeResult {
  if (isJudgeResult(data)) return data
  const refused = toResult(statusCode, data)
  const verdict = (VERDICTS.has(refused.status) ? refused.status : 'infra_error') as JudgeVerdict
  const result = failedJudgeResult(verdict, language, refused.error?.type ?? '', refused.error?.message ?? '')
  if (refused.maybe_ran !== undefined) result.maybe_ran = refused.maybe_ran
  return result
}

/** Talks to one runner at `baseUrl` (`http://10.0.0.5:8081`). */
export class HttpRunnerClient implements RunnerClient {
  readonly name: string
  readonly graceMs: number
  readonly #pool: Pool
  /** The load polls' own connection: a poll never waits behind calls for one of the pool's. */
  readonly #probe: Client
  readonly #queueTimeoutMs: number
  /** Headers of every request (the secret, when there is one); JSON and NDJSON requests add theirs. */
  readonly #headers: Record<string, string>
  readonly #jsonHeaders: Record<string, string>
  readonly #ndjsonHeaders: Record<string, string>
  /** The runner's sandbox API over HTTP. */
  readonly sandboxes: RunnerSandboxes
  #closed = false

  constructor(baseUrl: string, options: HttpRunnerClientOptions = {}) {
    this.name = new URL(baseUrl).origin
    this.graceMs = options.graceMs ?? GRACES.callMs
    this.#queueTimeoutMs = options.queueTimeoutMs ?? QUEUE_TIMEOUT_MS
    this.#headers =
      options.secret === undefined || options.secret === '' ? {} : { authorization: `Bearer ${options.secret}` }
    this.#jsonHeaders = { ...this.#headers, 'content-type': 'application/json' }
    this.#ndjsonHeaders = { ...this.#jsonHeaders, accept: NDJSON }
    this.#pool = new Pool(this.name, {
      connections: options.connections ?? 256,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connectTimeout: 2000
    })
    this.sandboxes = httpRunnerSandboxes({
      pool: this.#pool,
      name: this.name,
      headers: this.#headers,
      graceMs: this.graceMs,
      maxRunMs: LIMITS.maxTimeoutMs
    })
    this.#probe = new Client(this.name, { pipelining: 1, keepAliveTimeout: 30_000, connectTimeout: 2000 })
  }

  /**
   * The headers of the call's `context` (what is left of its deadline, sent once in each request,
   * as gRPC's `grpc-timeout`; its tenant and request id), and how long to wait for the runner's
   * answer: every job starts by the deadline or is answered `queue_timeout` at it, and a job that
   * started ends within its `timeout_ms` and the runner's grace, so the answer comes before budget
   * left + longest `timeout_ms` + grace. A timeout that fired sooner would turn a truthful
   * `queue_timeout`, or a result, into an `infra_error` of the gateway's own making.
   */
  #deadline(
    requests: readonly ExecRequest[] | readonly JudgeRequest[],
    context: CallContext,
    runMsOf: (request: never) => number = timeoutMsOf
  ): { headers: Record<string, string>; timeout: number } {
    const now = performance.now()
    const left = budgetLeft(context, now)
    const budget = Math.floor(left === Infinity ? this.#queueTimeoutMs : left)
    let max = 0
    for (const r of requests) max = Math.max(max, runMsOf(r as never))
    return { headers: contextHeaders(context, now), timeout: budget + max + this.graceMs }
  }

  async execute(request: ExecRequest, context: CallContext): Promise<ExecResult> {
    const { headers, timeout } = this.#deadline([request], context)
    try {
      // a request of its own: a call that never left (its connection still being made) is known
      const { statusCode, body } = await requestJson(this.#pool, {
        method: 'POST',
        path: RUNNER_PATHS.execute,
        headers: { ...this.#jsonHeaders, ...headers },
        body: JSON.stringify(request),
        timeoutMs: timeout,
        ...(context.signal === undefined ? {} : { signal: context.signal })
      })
      return toResult(statusCode, body)
    } catch (err) {
      throw unreachable(this.name, err)
    }
  }

  async executeBatch(
    requests: ExecRequest[],
    onResult: BatchResultListener | undefined,
    context: CallContext
  ): Promise<ExecResult[]> {
    return await this.#batch(
      RUNNER_PATHS.batch,
      requests,
      this.#deadline(requests, context),
      toResult,
      onResult,
      context
    )
  }

  /** One judge: its wait is what is left of its deadline, the judge's own bound (`judgeTimeBoundMs`) and the grace. */
  async judge(request: JudgeRequest, context: CallContext): Promise<JudgeResult> {
    const { headers, timeout } = this.#deadline([request], context, judgeTimeBoundMs)
    try {
      // a request of its own, as an execute's: a judge that never left is known
      const { statusCode, body } = await requestJson(this.#pool, {
        method: 'POST',
        path: RUNNER_PATHS.judge,
        headers: { ...this.#jsonHeaders, ...headers },
        body: JSON.stringify(request),
        timeoutMs: timeout,
        ...(context.signal === undefined ? {} : { signal: context.signal })
      })
      return toJudgeResult(statusCode, body, request.language ?? 'python')
    } catch (err) {
      throw unreachable(this.name, err)
    }
  }

  async judgeBatch(
    requests: JudgeRequest[],
    onResult: JudgeBatchResultListener | undefined,
    context: CallContext
  ): Promise<JudgeResult[]> {
    return await this.#batch(
      RUNNER_PATHS.judgeBatch,
      requests,
      this.#deadline(requests, context, judgeTimeBoundMs),
      (statusCode, data, i) => toJudgeResult(statusCode, data, requests[i].language ?? 'python'),
      onResult,
      context
    )
  }

  /**
   * A batch (of executes or judges) streamed back as NDJSON: each item's answer as it comes, made a result by `toItem`;
   * a batch the runner refused whole gives every item that refusal.
   */
  async #batch<Req, Res>(
    path: string,
    requests: Req[],
    deadline: { headers: Record<string, string>; timeout: number },
    toItem: (statusCode: number, data: unknown, index: number) => Res,
    onResult: ((index: number, result: Res) => void) | undefined,
    context: CallContext
  ): Promise<Res[]> {
    const timeout = deadline.timeout
    const results = new Array<Res>(requests.length)
    try {
      const { statusCode, headers, body } = await this.#pool.request({
        method: 'POST',
        path,
        headers: { ...this.#ndjsonHeaders, ...deadline.headers },
        body: JSON.stringify({ requests }),
        // every item starts within the one budget or is answered queue_timeout at it
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: context.signal
      })
      const type = String(headers['content-type'] ?? '')
      if (statusCode !== 200 || !type.startsWith(NDJSON)) {
        const data = (await body.json()) as { results?: unknown[] }
        if (statusCode === 200 && Array.isArray(data.results) && data.results.length === requests.length) {
          data.results.forEach((r, i) => {
            results[i] = toItem(200, r, i)
            onResult?.(i, results[i])
          })
          return results
        }
        // the whole batch was refused (overloaded, invalid): every item gets that answer
        for (let i = 0; i < requests.length; i++) {
          results[i] = toItem(statusCode, data, i)
          onResult?.(i, results[i])
        }
        return results
      }
      let seen = 0
      await readNdjson(body, (line) => {
        const { index, result } = line as { index: number; result: unknown }
        if (!Number.isInteger(index) || index < 0 || index >= requests.length || results[index] !== undefined) {
          throw new GatewayError(
            'SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE',
            `runner ${this.name} streamed a bad batch index ${index}`
          )
        }
        results[index] = toItem(200, result, index)
        seen++
        onResult?.(index, results[index])
      })
      if (seen !== requests.length) {
        throw new GatewayError(
          'SF_ERR_GATEWAY_RUNNER_UNREACHABLE',
          `runner ${this.name} ended a batch after ${seen} of ${requests.length} results`
        )
      }
      return results
    } catch (err) {
      throw unreachable(this.name, err)
    }
  }

  /** The runner's session API over HTTP. */
  readonly sessions: RunnerSessions = {
    create: async (request: SessionCreateRequest, key: string) =>
      await this.#session<SessionInfo>('POST', RUNNER_SESSION_PATHS.create, request, { [SESSION_KEY_HEADER]: key }),
    get: async (id: string, key: string) =>
      await this.#session<SessionInfo>('GET', idPath(RUNNER_SESSION_PATHS.one, id), undefined, {
        [SESSION_KEY_HEADER]: key
      }),
    execute: async (id: string, request: SessionExecRequest, key: string, context?: CallContext) =>
      await this.#session<ExecResult>(
        'POST',
        idPath(RUNNER_SESSION_PATHS.execute, id),
        request,
        { [SESSION_KEY_HEADER]: key },
        timeoutMsOf(request) + this.graceMs,
        context?.signal
      ),
    close: async (id: string, key: string) => {
      await this.#session<null>('DELETE', idPath(RUNNER_SESSION_PATHS.one, id), undefined, {
        [SESSION_KEY_HEADER]: key
      })
    }
  }

  async #session<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    timeout = 30_000,
    signal?: AbortSignal
  ): Promise<T> {
    return await callRunnerJson<T>(this.#pool, this.name, {
      method,
      path,
      body,
      headers: { ...this.#headers, ...headers },
      timeoutMs: timeout,
      signal
    })
  }

  /** The runner's load report, on the probe's own connection (a liveness signal: see `RunnerSet`). */
  async load(): Promise<RunnerLoad> {
    return await this.#report<RunnerLoad>(
      RUNNER_PATHS.load,
      2000,
      'load report',
      (d) => typeof d?.capacity === 'number',
      this.#probe
    )
  }

  /** The runner's `GET /v1/info`. */
  async info(): Promise<RunnerInfo> {
    return await this.#report<RunnerInfo>(RUNNER_PATHS.info, 5000, 'info', (d) => typeof d?.backend === 'string')
  }

  /** GETs one of the runner's reports; anything but HTTP 200 with the expected shape is a bad response. */
  async #report<T>(
    path: string,
    timeoutMs: number,
    what: string,
    valid: (data: T | undefined) => boolean,
    through: Pool | Client = this.#pool
  ): Promise<T> {
    try {
      const { statusCode, body } = await through.request({
        method: 'GET',
        path,
        headers: this.#headers,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs
      })
      const data = (await body.json()) as T
      if (statusCode !== 200 || !valid(data)) {
        const code = (data as { error?: { code?: unknown } } | null)?.error?.code
        throw new GatewayError(
          'SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE',
          `runner ${this.name} ${what}: HTTP ${statusCode}${typeof code === 'string' ? ` ${code}` : ''}`
        )
      }
      return data
    } catch (err) {
      throw unreachable(this.name, err)
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.all([
      this.#pool.close().catch(() => this.#pool.destroy()),
      this.#probe.close().catch(() => this.#probe.destroy())
    ])
  }
}
