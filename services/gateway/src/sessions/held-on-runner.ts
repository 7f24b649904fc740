/**
 * What sessions and sandboxes share across the fleet: each is held by one runner, which its id names
 * (`encodeSessionId`). One is opened on the least loaded runner that will hold it ({@link openOnSome}); every later
 * call goes to that runner ({@link locate}, {@link reach}). An id sandfleet did not make is 404
 * `SF_ERR_SESSION_NOT_FOUND`; one whose runner left the fleet or stopped answering is lost: 410
 * `SF_ERR_SESSION_LOST`, status `infra_error` (its state is gone, the fleet's fault, never the caller's: a new one
 * retries it). The runner's own refusals pass through unchanged.
 */
import { decodeSessionId, SESSION_LOST, SESSION_NOT_FOUND } from '@sandfleet/protocol'
import { GatewayError, RunnerRefusal } from '../errors.ts'
import type { RunnerMember, RunnerSet } from '../runners/runner-set.ts'

/** What a runner holds for a caller: the word its messages use. */
export type Held = 'session' | 'sandbox'

/** Codes after which opening one tries the next runner. */
const TRY_ANOTHER: ReadonlySet<string> = new Set([
  'SF_ERR_SESSION_LIMIT',
  'SF_ERR_SESSION_DISABLED',
  'SF_ERR_SESSION_HOST'
])

/** One the fleet lost: 410 (it is gone), and the fleet's fault (`infra_error`), never the caller's. */
function lostRefusal(message: string): RunnerRefusal {
  return new RunnerRefusal(410, { status: 'infra_error', error: { code: SESSION_LOST, message } })
}

/** Counts `call` in the member's load estimate while it runs. */
export async function onMember<T>(member: RunnerMember, call: () => Promise<T>): Promise<T> {
  member.outstanding++
  try {
    return await call()
  } finally {
    member.outstanding--
  }
}

/**
 * Opens one with `open` on the least loaded runner whose part (`partOf`) holds them, trying the next runner after a
 * refusal another may not give (a runner full, without sessions, its session host down) or no answer at all.
 */
export async function openOnSome<P, T>(
  runners: RunnerSet,
  held: Held,
  partOf: (member: RunnerMember) => P | undefined,
  open: (part: P) => Promise<T>
): Promise<T> {
  const tried = new Set<RunnerMember>()
  let last: unknown
  for (let member = runners.pick(); member !== undefined; member = runners.pick(tried)) {
    tried.add(member)
    const part = partOf(member)
    if (part === undefined) continue
    try {
      return await onMember(member, () => open(part))
    } catch (err) {
      last = err
      if (err instanceof RunnerRefusal && TRY_ANOTHER.has(err.code)) continue
      if (err instanceof GatewayError && err.code === 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE') {
        member.up = false
        continue
      }
      throw err
    }
  }
  if (last !== undefined) throw last
  if (tried.size === 0) throw new GatewayError('SF_ERR_GATEWAY_NO_RUNNERS', `no runner is ready to open a ${held}`)
  throw new RunnerRefusal(501, {
    status: 'invalid_request',
    error: { code: 'SF_ERR_SESSION_DISABLED', message: `no runner of this fleet holds ${held}s` }
  })
}

/** The runner holding `id` and its part (`partOf`), or the refusal: not an id of ours (404), its runner gone (410). */
export function locate<P>(
  runners: RunnerSet,
  held: Held,
  id: string,
  partOf: (member: RunnerMember) => P | undefined
): { member: RunnerMember; part: P } {
  const decoded = decodeSessionId(id)
  if (decoded === undefined)
    throw new RunnerRefusal(404, {
      status: 'invalid_request',
      error: { code: SESSION_NOT_FOUND, message: `${JSON.stringify(id)} is not a ${held} id` }
    })
  const member = runners.byId(decoded.runner)
  const part = member === undefined ? undefined : partOf(member)
  if (member === undefined || part === undefined)
    throw lostRefusal(`${held} ${id} lost: runner ${decoded.runner} holding it is no longer in the fleet`)
  return { member, part }
}

/**
 * A call on the runner holding one: an answer says the runner lives; no answer at all means it is lost. `counted`
 * false leaves the call out of the runner's load estimate (a process that may run for hours).
 */
export async function reach<T>(member: RunnerMember, held: Held, call: () => Promise<T>, counted = true): Promise<T> {
  try {
    const answer = counted ? await onMember(member, call) : await call()
    member.answered()
    return answer
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE') {
      member.up = false
      throw lostRefusal(`${held} lost: runner ${member.id} holding it did not answer (${err.message})`)
    }
    throw err
  }
}
