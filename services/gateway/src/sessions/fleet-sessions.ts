/**
 * Sessions across the fleet, with no state in the gateway: a session is opened on the least
 * loaded runner that holds sessions, and its id names that runner (`encodeSessionId`), so every
 * later call on it goes straight there, from any gateway replica.
 *
 * A session answers only the key that opened it (a digest of the caller's API key, '' without
 * one): to any other key it is not found, so an id alone does not open another tenant's session.
 *
 * Its refusals are held-on-runner.ts's, as a sandbox's are: an id sandfleet did not make is 404,
 * a session whose runner left the fleet or stopped answering is lost (410, `infra_error`).
 */
import {
  NO_CALL_CONTEXT,
  withSignal,
  type CallContext,
  type ExecResult,
  type SessionCreateRequest,
  type SessionExecRequest,
  type SessionInfo
} from '@sandfleet/protocol'
import type { RunnerSessions } from '../runners/runner-client.ts'
import type { RunnerMember, RunnerSet } from '../runners/runner-set.ts'
import { locate, openOnSome, reach } from './held-on-runner.ts'

const sessionsOf = (member: RunnerMember): RunnerSessions | undefined => member.client.sessions

/** The fleet's sessions as one gateway reaches them; see the module comment. */
export class FleetSessions {
  readonly #runners: RunnerSet

  constructor(runners: RunnerSet) {
    this.#runners = runners
  }

  /** Opens a session on the least loaded runner that will hold it. */
  async create(request: SessionCreateRequest, key: string): Promise<SessionInfo> {
    return await openOnSome(this.#runners, 'session', sessionsOf, (sessions) => sessions.create(request, key))
  }

  /** The session's info, for the key that opened it. */
  async get(id: string, key: string): Promise<SessionInfo> {
    const { member, part } = locate(this.#runners, 'session', id, sessionsOf)
    return await reach(member, 'session', () => part.get(id, key))
  }

  /** Runs one cell in the session's state, for the key that opened it, in the request's `context`. */
  async execute(id: string, request: SessionExecRequest, key: string, context?: CallContext): Promise<ExecResult> {
    const { member, part } = locate(this.#runners, 'session', id, sessionsOf)
    // a runner found silent aborts the cell: the session is lost at once, not at the cell's deadline
    const watching = withSignal(context ?? NO_CALL_CONTEXT, member.silenced)
    return await reach(member, 'session', () => part.execute(id, request, key, watching))
  }

  /** Closes the session, for the key that opened it. */
  async close(id: string, key: string): Promise<void> {
    const { member, part } = locate(this.#runners, 'session', id, sessionsOf)
    await reach(member, 'session', () => part.close(id, key))
  }
}
