/**
 * Sessions across the fleet, with no state in the gateway: a session is opened on the least
 * loaded runner that holds sessions, and its id names that runner (`encodeSessionId`), so every
 * later call on it goes straight there, from any gateway replica.
 *
 * A session answers only the key that opened it (a digest of the caller's API key, '' without
 * one): to any other key it is not found, so an id alone does not open another tenant's session.
 *
 * Refusals are {@link RunnerRefusal}s: an id sandfleet did not make is 404
 * `SF_ERR_SESSION_NOT_FOUND`; a session whose runner left the fleet or stopped answering is 410
 * `SF_ERR_SESSION_LOST` (its state is gone: open a new one); the runner's own refusals pass
 * through unchanged.
 */
import {
  decodeSessionId,
  SESSION_LOST,
  SESSION_NOT_FOUND,
  type CallContext,
  type ExecResult,
  type SessionCreateRequest,
  type SessionExecRequest,
  type SessionInfo
} from '@sandfleet/protocol'
import { GatewayError, RunnerRefusal } from '../errors.ts'
import type { RunnerSessions } from '../runners/runner-client.ts'
import type { RunnerMember, RunnerSet } from '../runners/runner-set.ts'

/** Codes after which `create` tries the next runner. */
const TRY_ANOTHER: ReadonlySet<string> = new Set([
  'SF_ERR_SESSION_LIMIT',
  'SF_ERR_SESSION_DISABLED',
  'SF_ERR_SESSION_HOST'
])

function lost(message: string): RunnerRefusal {
  return new RunnerRefusal(410, { status: 'invalid_request', error: { code: SESSION_LOST, message } })
}

/** The fleet's sessions as one gateway reaches them; see the module comment. */
export class FleetSessions {
  readonly #runners: RunnerSet

  constructor(runners: RunnerSet) {
    this.#runners = runners
  }

  /** Opens a session on the least loaded runner that will hold it. */
  async create(request: SessionCreateRequest, key: string): Promise<SessionInfo> {
    const tried = new Set<RunnerMember>()
    let last: unknown
    for (let member = this.#runners.pick(); member !== undefined; member = this.#runners.pick(tried)) {
      tried.add(member)
      const sessions = member.client.sessions
      if (sessions === undefined) continue
      try {
        return await this.#on(member, () => sessions.create(request, key))
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
    if (tried.size === 0) throw new GatewayError('SF_ERR_GATEWAY_NO_RUNNERS', 'no runner is ready to open a session')
    throw new RunnerRefusal(501, {
      status: 'invalid_request',
      error: { code: 'SF_ERR_SESSION_DISABLED', message: 'no runner of this fleet holds sessions' }
    })
  }

  /** The session's info, for the key that opened it. */
  async get(id: string, key: string): Promise<SessionInfo> {
    const { member, sessions } = this.#locate(id)
    return await this.#reach(member, () => sessions.get(id, key))
  }

  /** Runs one cell in the session's state, for the key that opened it, in the request's `context`. */
  async execute(id: string, request: SessionExecRequest, key: string, context?: CallContext): Promise<ExecResult> {
    const { member, sessions } = this.#locate(id)
    return await this.#reach(member, () => sessions.execute(id, request, key, context))
  }

  /** Closes the session, for the key that opened it. */
  async close(id: string, key: string): Promise<void> {
    const { member, sessions } = this.#locate(id)
    await this.#reach(member, () => sessions.close(id, key))
  }

  #locate(id: string): { member: RunnerMember; sessions: RunnerSessions } {
    const decoded = decodeSessionId(id)
    if (decoded === undefined)
      throw new RunnerRefusal(404, {
        status: 'invalid_request',
        error: { code: SESSION_NOT_FOUND, message: `${JSON.stringify(id)} is not a session id` }
      })
    const member = this.#runners.byId(decoded.runner)
    const sessions = member?.client.sessions
    if (member === undefined || sessions === undefined)
      throw lost(`session ${id} lost: runner ${decoded.runner} holding it is no longer in the fleet`)
    return { member, sessions }
  }

  /** A call on the runner holding a session: no answer at all means the session is lost. */
  async #reach<T>(member: RunnerMember, call: () => Promise<T>): Promise<T> {
    try {
      return await this.#on(member, call)
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE') {
        member.up = false
        throw lost(`session lost: runner ${member.id} holding it did not answer (${err.message})`)
      }
      throw err
    }
  }

  /** Counts the call in the member's load estimate while it runs. */
  async #on<T>(member: RunnerMember, call: () => Promise<T>): Promise<T> {
    member.outstanding++
    try {
      return await call()
    } finally {
      member.outstanding--
    }
  }
}
