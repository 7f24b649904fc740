/**
 * A runner's sandboxes over its internal HTTP API (`RUNNER_SANDBOX_PATHS`), on the {@link HttpRunnerClient}'s
 * keep-alive pool. A refusal rejects with a {@link RunnerRefusal} (the runner's status and ErrorBody); no answer at
 * all with `SF_ERR_GATEWAY_RUNNER_UNREACHABLE`. A streamed call reads the runner's NDJSON events as they come; a
 * refusal in its stream rejects with the status the runner gave it.
 */
import type { Pool } from 'undici'
import {
  RUNNER_HEADERS,
  RUNNER_SANDBOX_PATHS,
  SANDBOX_AUTH_HEADER as AUTH_HEADER,
  SANDBOX_TOKEN_HEADER,
  STATUSES,
  type ErrorBody,
  type SandboxAuth,
  type SandboxInfo,
  type SandboxStreamEvent,
  type SandboxStreamRefusal
} from '@sandfleet/protocol'
import { readNdjson } from '@sandfleet/protocol/http'
import { RunnerRefusal } from '../errors.ts'
import type { RunnerSandboxes } from './runner-client.ts'
import { callRunnerJson, idPath, refusal, unreachable } from './runner-json.ts'

/** What the sandbox calls share with their client. */
export interface HttpSandboxesOptions {
  pool: Pool
  /** The runner's name, in errors. */
  name: string
  /** Headers of every request (the fleet's secret). */
  headers: Record<string, string>
  /** The longest a call may wait for its answer past its run (ms). */
  graceMs: number
  /** The longest a run may take (ms), when it names none. */
  maxRunMs: number
}

function authHeaders(auth: SandboxAuth): Record<string, string> {
  if ('key' in auth) return { [AUTH_HEADER]: 'key', [RUNNER_HEADERS.sessionKey]: auth.key }
  return auth.token === undefined
    ? { [AUTH_HEADER]: 'token' }
    : { [AUTH_HEADER]: 'token', [SANDBOX_TOKEN_HEADER]: auth.token }
}

const STATUS_SET: ReadonlySet<string> = new Set(STATUSES)

/** A stream's refusal line as a runner of any age writes it: an older one writes only its `error`. */
type StreamRefusalLine = Partial<SandboxStreamRefusal> & { error: ErrorBody['error'] }

/**
 * The refusal a stream's last line stands for: its HTTP status and ErrorBody, as had it come before the first event
 * (a lost session: 410 `infra_error`, the fleet's). A line without them, from a runner older than
 * {@link SandboxStreamRefusal}, is blamed on the caller as it was then: 410 `invalid_request`.
 */
function streamRefusal(line: StreamRefusalLine): RunnerRefusal {
  const { http_status: statusCode, status, error } = line
  const isRefusal =
    typeof statusCode === 'number' && Number.isInteger(statusCode) && statusCode >= 400 && statusCode < 600
  if (isRefusal && status !== undefined && STATUS_SET.has(status))
    return new RunnerRefusal(statusCode, { status, error })
  return new RunnerRefusal(410, { status: 'invalid_request', error })
}

/** The sandboxes of the runner behind `options.pool`. */
export function httpRunnerSandboxes(options: HttpSandboxesOptions): RunnerSandboxes {
  const { pool, name, headers, graceMs } = options
  const json = { ...headers, 'content-type': 'application/json' }

  const request = async <T>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    extra: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal
  ): Promise<T> =>
    await callRunnerJson<T>(pool, name, { method, path, body, headers: { ...headers, ...extra }, timeoutMs, signal })

  return {
    create: async (req, key) =>
      await request<SandboxInfo>('POST', RUNNER_SANDBOX_PATHS.all, req, authHeaders({ key }), 30_000),
    list: async (key) =>
      await request<SandboxInfo[]>('GET', RUNNER_SANDBOX_PATHS.all, undefined, authHeaders({ key }), 10_000),
    call: async (id, auth, call, context) => {
      const run = call.op === 'run' ? (call.timeout_ms ?? options.maxRunMs) : 30_000
      const path = idPath(RUNNER_SANDBOX_PATHS.call, id)
      return await request('POST', path, call, authHeaders(auth), run + graceMs, context?.signal)
    },
    stream: async (id, auth, call, onEvent, signal) => {
      const path = idPath(RUNNER_SANDBOX_PATHS.stream, id)
      // a run's first event comes when it has its turn, its last by its deadline; a process runs as long as it runs
      const runMs = call.op === 'run' ? (call.timeout_ms ?? options.maxRunMs) + graceMs : undefined
      let res: Awaited<ReturnType<Pool['request']>>
      try {
        res = await pool.request({
          method: 'POST',
          path,
          headers: { ...json, ...authHeaders(auth) },
          body: JSON.stringify(call),
          headersTimeout: runMs ?? 30_000,
          bodyTimeout: runMs ?? 0,
          signal
        })
      } catch (err) {
        if (signal?.aborted === true) return
        throw unreachable(name, err)
      }
      if (res.statusCode !== 200) {
        const text = await res.body.text().catch(() => '')
        let data: unknown = null
        try {
          data = text === '' ? null : JSON.parse(text)
        } catch {}
        throw refusal(name, res.statusCode, data, `POST ${path}`)
      }
      try {
        await readNdjson(res.body, (line) => {
          const event = line as SandboxStreamEvent<typeof call> | StreamRefusalLine
          if ('error' in event) throw streamRefusal(event)
          onEvent(event)
        })
      } catch (err) {
        if (signal?.aborted === true) return
        throw err instanceof RunnerRefusal ? err : unreachable(name, err)
      }
    }
  }
}
