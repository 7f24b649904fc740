/**
 * One JSON call to a runner's session or sandbox API, on its client's keep-alive pool: the body of a 2xx answer; a
 * refusal (the runner's status and ErrorBody) rejects with a {@link RunnerRefusal}, any other answer with
 * `SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE`, no answer at all with `SF_ERR_GATEWAY_RUNNER_UNREACHABLE`.
 */
import type { Pool } from 'undici'
import type { ErrorBody } from '@sandfleet/protocol'
import { GatewayError, RunnerRefusal } from '../errors.ts'

/** What one call sends. */
export interface RunnerJsonCall {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  /** Sent as JSON (with its content type); undefined: no body. */
  body?: unknown
  /** Every header but the content type (the fleet's secret, the caller's key or token). */
  headers: Record<string, string>
  /** Longest wait for the answer's headers, and between chunks of its body, ms. */
  timeoutMs: number
  signal?: AbortSignal
}

/** No answer from runner `name` (a refused or broken connection, a timeout): `SF_ERR_GATEWAY_RUNNER_UNREACHABLE`. */
export function unreachable(name: string, err: unknown): GatewayError {
  if (err instanceof GatewayError) return err
  const message = err instanceof Error ? err.message : String(err)
  return new GatewayError('SF_ERR_GATEWAY_RUNNER_UNREACHABLE', `runner ${name}: ${message}`, { cause: err })
}

/** A non-2xx answer of runner `name` to `what`: its refusal, or a bad response when it carries no ErrorBody. */
export function refusal(name: string, statusCode: number, data: unknown, what: string): Error {
  const body = data as ErrorBody | null
  if (typeof body?.error?.code === 'string') return new RunnerRefusal(statusCode, body)
  return new GatewayError(
    'SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE',
    `runner ${name} answered HTTP ${statusCode} to ${what} without an error body`
  )
}

/** A path template's `:id` filled in. */
export const idPath = (template: string, id: string): string => template.replace(':id', encodeURIComponent(id))

/** Makes `call` to runner `name` through `pool`; see the module comment. */
export async function callRunnerJson<T>(pool: Pool, name: string, call: RunnerJsonCall): Promise<T> {
  const { method, path, body, timeoutMs, signal } = call
  let statusCode: number
  let data: unknown
  try {
    const res = await pool.request({
      method,
      path,
      headers: body === undefined ? call.headers : { ...call.headers, 'content-type': 'application/json' },
      body: body === undefined ? null : JSON.stringify(body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal
    })
    statusCode = res.statusCode
    const text = await res.body.text()
    data = text === '' ? null : JSON.parse(text)
  } catch (err) {
    throw unreachable(name, err)
  }
  if (statusCode >= 200 && statusCode < 300) return data as T
  throw refusal(name, statusCode, data, `${method} ${path}`)
}
