/**
 * The deployment's limits (maxTimeoutMs, maxMemoryMb, maxCodeBytes) on the calls the compatible
 * APIs make. The /v1 routes hold a request to them in their schemas (schemas.ts); a compatible
 * API maps its own fields (SandboxFusion's `run_timeout` in seconds, a notebook's cell timeout)
 * into a request first, so the same limits are checked here, on the mapped request, and a call
 * over one is answered `invalid_request` naming the field (which each API maps to its own error).
 */
import { failedResult, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import type { RouteLimits } from '../schemas.ts'
import { codeTooLong } from '../plugins/error-shape.ts'
import type { CompatSessions, ExecuteBatchFn, ExecuteFn } from './execute.ts'

export type ConfiguredLimits = Pick<RouteLimits, 'maxTimeoutMs' | 'maxMemoryMb' | 'maxCodeBytes'>

/** The answer to a call over one of `limits`, or `undefined` when it is within them. */
export function overLimit (request: Pick<ExecRequest, 'code' | 'timeout_ms' | 'memory_mb'>, limits: ConfiguredLimits): ExecResult | undefined {
  const refuse = (field: string, value: number, limit: number): ExecResult =>
    failedResult('invalid_request', 'SF_ERR_GATEWAY_INVALID_REQUEST', `${field} ${value} is over this deployment's limit of ${limit}`)
  if (request.timeout_ms !== undefined && request.timeout_ms > limits.maxTimeoutMs) return refuse('timeout_ms', request.timeout_ms, limits.maxTimeoutMs)
  if (request.memory_mb !== undefined && request.memory_mb > limits.maxMemoryMb) return refuse('memory_mb', request.memory_mb, limits.maxMemoryMb)
  const codeBytes = Buffer.byteLength(request.code)
  if (codeBytes > limits.maxCodeBytes) return failedResult('invalid_request', 'SF_ERR_GATEWAY_INVALID_REQUEST', codeTooLong(limits.maxCodeBytes, `${codeBytes} bytes`))
  return undefined
}

/** `execute` for calls within `limits`; the others answered {@link overLimit} without running. */
export function withinLimits (execute: ExecuteFn, limits: ConfiguredLimits): ExecuteFn {
  return async (request) => overLimit(request, limits) ?? await execute(request)
}

/** `executeBatch` for the calls within `limits`, in one batch; the others answered in their places without running. */
export function batchWithinLimits (executeBatch: ExecuteBatchFn, limits: ConfiguredLimits): ExecuteBatchFn {
  return async (requests) => {
    const refused = requests.map((r) => overLimit(r, limits))
    if (refused.every((r) => r === undefined)) return await executeBatch(requests)
    const ran = await executeBatch(requests.filter((_, i) => refused[i] === undefined))
    let next = 0
    return refused.map((r) => r ?? ran[next++])
  }
}

/** `sessions` whose cells are held to `limits` as calls are. */
export function sessionsWithinLimits (sessions: CompatSessions, limits: ConfiguredLimits): CompatSessions {
  return { ...sessions, execute: async (id, cell) => overLimit(cell, limits) ?? await sessions.execute(id, cell) }
}
