/**
 * A call as the runner takes it, decided once: checked against the runner's own limits
 * (`request-check.ts`) and its defaults resolved (`resolveExecRequest`) into the job its pool
 * runs, or refused with the reason. Nothing after this checks or defaults the request again.
 */
import { resolveExecRequest, type ExecRequest, type Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { Job } from '../sandbox/contract.ts'
import type { RunnerConfig } from '../config.ts'

import { checkRequest, type RequestProblem } from './request-check.ts'

/** A call checked and resolved: its job, or why it is refused (never both). */
export type PreparedCall =
  | { readonly job: Job; readonly problem: undefined; readonly requestId: string | undefined }
  | { readonly job: undefined; readonly problem: RequestProblem; readonly requestId: string | undefined }

/**
 * Prepares `request` under `config`; `served` is the pools by language (empty before start:
 * the language is then checked when the call reaches its pool).
 */
export function prepareCall(
  request: ExecRequest,
  config: RunnerConfig,
  served: ReadonlyMap<Language, unknown>
): PreparedCall {
  const problem = checkRequest(request, config, served)
  const requestId = typeof request.request_id === 'string' ? request.request_id : undefined
  if (problem !== undefined) return { job: undefined, problem, requestId }
  try {
    const resolved = resolveExecRequest(request, { isolation: config.isolation, maxTimeoutMs: config.maxTimeoutMs })
    if (!config.allowReuse) resolved.isolation = 'fork'
    return { job: { request: resolved, maxOutputBytes: config.maxOutputBytes }, problem: undefined, requestId }
  } catch (err) {
    return {
      job: undefined,
      problem: { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: '', message: messageOf(err) },
      requestId
    }
  }
}
