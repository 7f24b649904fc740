/**
 * A call as the runner takes it, decided once: checked against the runner's own limits
 * (`request-check.ts`) and its defaults resolved (`resolveExecRequest`) into the job its pool
 * runs, complete and frozen (its deadline for waiting and its tenant from the call's context),
 * or refused with the reason. Nothing after this checks, defaults or writes into the job.
 */
import { resolveExecRequest, type CallContext, type ExecRequest, type Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { PooledJob } from '../sandbox/contract.ts'
import type { RunnerConfig } from '../config.ts'

import { checkRequest, type RequestProblem } from './request-check.ts'

/** A call checked and resolved, in its context: its job, or why it is refused (never both). Frozen. */
export type PreparedCall =
  | {
      readonly job: PooledJob
      readonly problem: undefined
      readonly requestId: string | undefined
      readonly context: CallContext
    }
  | {
      readonly job: undefined
      readonly problem: RequestProblem
      readonly requestId: string | undefined
      readonly context: CallContext
    }

/**
 * The job's one deadline for waiting (`Job.startBy`): its context's deadline, capped by the
 * runner's `queueTimeoutMs` from `now` (the `performance.now()` clock).
 */
export function startDeadline(context: CallContext, config: Pick<RunnerConfig, 'queueTimeoutMs'>, now: number): number {
  return Math.min(context.deadline, now + config.queueTimeoutMs)
}

/**
 * Prepares `request` in `context` under `config`; `served` is the pools by language (empty
 * before start: the language is then checked when the call reaches its pool).
 */
export function prepareCall(
  request: ExecRequest,
  context: CallContext,
  config: RunnerConfig,
  served: ReadonlyMap<Language, unknown>,
  now = performance.now()
): PreparedCall {
  const problem = checkRequest(request, config, served)
  const requestId = typeof request.request_id === 'string' ? request.request_id : undefined
  if (problem !== undefined) return Object.freeze({ job: undefined, problem, requestId, context })
  try {
    const resolved = resolveExecRequest(request, { isolation: config.isolation, maxTimeoutMs: config.maxTimeoutMs })
    if (!config.allowReuse) resolved.isolation = 'fork'
    const job: PooledJob = {
      request: Object.freeze(resolved),
      maxOutputBytes: config.maxOutputBytes,
      startBy: startDeadline(context, config, now),
      tenant: context.tenant
    }
    return Object.freeze({ job: Object.freeze(job), problem: undefined, requestId, context })
  } catch (err) {
    const problem: RequestProblem = { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: '', message: messageOf(err) }
    return Object.freeze({ job: undefined, problem, requestId, context })
  }
}
