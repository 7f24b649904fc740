/**
 * The {@link ExecResult} a pool answers with, built in one place: from a sandbox's outcome, or for
 * a job the pool answered itself (refused, cancelled, expired, drained, its sandbox failed). Each
 * carries the runner's id and the caller's request id when it gave one, and a fleet status says
 * whether the code may have run (`maybe_ran`): not for a job the pool answered before a sandbox
 * took it, maybe for one whose sandbox failed or stalled with it.
 */
import { FLEET_STATUSES, failedResult, type ExecResult } from '@sandfleet/protocol'

const fleet: ReadonlySet<string> = new Set(FLEET_STATUSES)
import type { RunOutcome } from '../sandbox/contract.ts'
import { RUNNER_ERRORS, type RunnerErrorCode } from '../errors.ts'

/**
 * A result the pool gives without the user's code having run (`maybe_ran: false` on a fleet status, unless `maybeRan`
 * says it may have); `message` defaults to the code's.
 */
export function poolFailure(
  runnerId: string,
  requestId: string | undefined,
  status: ExecResult['status'],
  code: RunnerErrorCode | string,
  queueMs: number,
  message?: string,
  maybeRan = false
): ExecResult {
  const spec = (RUNNER_ERRORS as Record<string, { message: string }>)[code]
  const result = failedResult(status, code, message ?? spec?.message ?? code, { queue_ms: queueMs, runner: runnerId })
  if (fleet.has(status)) result.maybe_ran = maybeRan
  if (requestId !== undefined) result.request_id = requestId
  return result
}

/**
 * The result of a job a sandbox took: what its code did, or `queue_timeout` when the sandbox kept
 * it waiting (a tier warming) past its deadline. `queueMs` is the wait in the pool; the wait in
 * the sandbox is added to it.
 */
export function outcomeResult(
  runnerId: string,
  requestId: string | undefined,
  sandboxId: string,
  queueMs: number,
  outcome: RunOutcome
): ExecResult {
  if (outcome.status === 'queue_timeout') {
    const result = poolFailure(
      runnerId,
      requestId,
      'queue_timeout',
      'SF_ERR_RUNNER_QUEUE_TIMEOUT',
      queueMs + (outcome.waited_ms ?? 0),
      outcome.error?.message
    )
    result.sandbox = sandboxId
    return result
  }
  const result: ExecResult = {
    status: outcome.status,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    exit_code: outcome.exit_code,
    duration_ms: outcome.duration_ms,
    queue_ms: queueMs + (outcome.waited_ms ?? 0),
    truncated: outcome.truncated,
    error: outcome.error,
    files: outcome.files,
    runner: runnerId,
    sandbox: sandboxId
  }
  if (outcome.fetch_errors !== undefined && Object.keys(outcome.fetch_errors).length > 0)
    result.fetch_errors = outcome.fetch_errors
  if (outcome.cpu_ms !== undefined) result.cpu_ms = outcome.cpu_ms
  if (outcome.isolation !== undefined) result.isolation = outcome.isolation
  if (requestId !== undefined) result.request_id = requestId
  return result
}

/**
 * The result of a job its sandbox did not answer by the job's hard deadline, or answered `timeout` across a freeze of
 * the runner (`message` says which): `infra_error`, stalled, the fleet's fault.
 */
export function stalledResult(
  runnerId: string,
  requestId: string | undefined,
  sandboxId: string,
  queueMs: number,
  message: string
): ExecResult {
  const result = poolFailure(runnerId, requestId, 'infra_error', 'SF_ERR_RUNNER_STALLED', queueMs, message, true)
  result.sandbox = sandboxId
  return result
}

/**
 * The result of a job whose sandbox did not answer by the job's hard deadline because the job's code filled one of its
 * limits (`exhausted`, the sandbox's words): `timeout`, the code's, as the sandbox would have answered it had the code
 * let it (it ran `timeout_ms` and more, the runner not frozen).
 */
export function exhaustedResult(
  runnerId: string,
  requestId: string | undefined,
  sandboxId: string,
  queueMs: number,
  ranMs: number,
  exhausted: string
): ExecResult {
  const result = failedResult(
    'timeout',
    'Timeout',
    `the job ran past its timeout and kept its sandbox from stopping it: ${exhausted}; the sandbox was killed and is replaced`,
    { duration_ms: ranMs, queue_ms: queueMs, runner: runnerId, sandbox: sandboxId }
  )
  if (requestId !== undefined) result.request_id = requestId
  return result
}

/** The message of a `timeout` answered stalled because the runner was frozen `frozenMs` while the job ran. */
export function frozenTimeoutMessage(frozenMs: number): string {
  return `stalled: the runner was frozen ${Math.round(frozenMs)} ms while the job ran, and its sandbox stopped the job at a deadline the freeze may have taken; the fleet's fault, not a timeout of the code (the job ran, maybe not for its timeout_ms)`
}

/**
 * The result of a job whose sandbox's execute rejected (`err`): `infra_error`, the fleet's fault; the code may have run
 * (the sandbox had it), unless the sandbox refused it before it ran (found tampered with).
 */
export function sandboxFailure(
  runnerId: string,
  requestId: string | undefined,
  sandboxId: string,
  queueMs: number,
  code: string,
  err: string
): ExecResult {
  const result = poolFailure(
    runnerId,
    requestId,
    'infra_error',
    code,
    queueMs,
    `${RUNNER_ERRORS.SF_ERR_RUNNER_SANDBOX_FAILED.message}: ${err}`,
    code !== 'SF_ERR_RUNNER_SANDBOX_TAMPERED'
  )
  result.sandbox = sandboxId
  return result
}
