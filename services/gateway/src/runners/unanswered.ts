/**
 * A call its runner did not answer (its client rejected), as the result the router gives, with
 * whether the code may have run (`maybe_ran`) and whether the router tries it on another runner:
 *
 * - the request never left (its connection refused, unreachable, the connect timed out, or
 *   still being made when the call was aborted: `NotSentError`): nothing ran, `maybe_ran: false`,
 *   tried elsewhere, also when its runner went silent;
 * - the runner went silent ({@link RunnerSilentError}: paused, cut off, stuck): it may have
 *   started the call and may still finish it, `maybe_ran: true`, not tried again (a second run
 *   while the first may live: the fleet runs a call at most once while its runner lives);
 * - the connection was reset or closed under the call (the runner died, or restarted): it may have
 *   run, `maybe_ran: true`, and it is tried elsewhere all the same: its run, if any, died with it
 *   (at least once when the runner dies);
 * - no answer within the call's wait, or one that is not a result: it may have run, not tried again.
 */
import { failedResult, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import { GatewayError } from '../errors.ts'
import { RunnerSilentError, type RunnerMember } from './runner-set.ts'

/** Codes of a connection that was never made: the request never left. */
const NEVER_SENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT'
])
/** Codes of a connection the runner's side ended under the call: its process died or restarted. */
const DIED: ReadonlySet<string> = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])

/** What a call with no answer becomes; see the module comment. */
export interface Unanswered {
  result: ExecResult
  /** Tried on another runner (while the call's budget lasts). */
  retry: boolean
}

/** The errors `err` was caused by, itself first (a few levels: a client wraps undici's error). */
function* causes(err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e != null && depth < 5; depth++) {
    yield e
    e = (e as { cause?: unknown }).cause
  }
}

function codeIn(err: unknown, codes: ReadonlySet<string>): boolean {
  for (const e of causes(err)) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && codes.has(code)) return true
  }
  return false
}

/** The result of `request`, which `member`'s runner did not answer because of `err`. */
export function unanswered(err: unknown, member: RunnerMember, request: Pick<ExecRequest, 'request_id'>): Unanswered {
  const message = err instanceof Error ? err.message : String(err)
  const extra: Partial<ExecResult> = { runner: member.id }
  if (request.request_id !== undefined) extra.request_id = request.request_id
  const code = err instanceof GatewayError ? err.code : 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE'
  if (codeIn(err, NEVER_SENT) || [...causes(err)].some((e) => (e as { neverSent?: unknown }).neverSent === true))
    return { result: failedResult('infra_error', code, message, { ...extra, maybe_ran: false }), retry: true }
  const silent = [...causes(err)].find((e): e is RunnerSilentError => e instanceof RunnerSilentError)
  if (silent !== undefined)
    return {
      result: failedResult('infra_error', 'SF_ERR_GATEWAY_RUNNER_SILENT', silent.message, {
        ...extra,
        maybe_ran: true
      }),
      retry: false
    }
  return {
    result: failedResult('infra_error', code, message, { ...extra, maybe_ran: true }),
    retry: codeIn(err, DIED)
  }
}
