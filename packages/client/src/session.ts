/** A session: one sandbox whose interpreter state persists across calls, until its TTL or close. */
import { timeoutMsOf, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import { sessionClosedError, sessionLostError } from './errors.ts'
import type { Transport } from './transport.ts'
import { withRetries, type RetryStats } from './retry.ts'
import type { RetryPolicy } from './backoff.ts'
import type { CallOptions } from './call-options.ts'

/** Inside a session only statuses that prove nothing ran are retried (`infra_error` may have run half a cell). */
const sessionRetriable = (result: ExecResult): boolean =>
  result.status === 'overloaded' || result.status === 'queue_timeout'

/** Lifecycle of a {@link Session}. */
export type SessionState = 'open' | 'lost' | 'closed'

/** A handle on a fleet session (`POST /v1/sessions`); create it with `client.createSession()`. */
export class Session {
  /** The fleet's session id. */
  readonly id: string
  private stateValue: SessionState = 'open'

  /** Wraps an existing session id (the client creates it). */
  constructor(
    id: string,
    private readonly transport: Transport,
    private readonly deps: { policy: RetryPolicy; stats: RetryStats; deadlineSlackMs: number }
  ) {
    this.id = id
  }

  /** `open`, `lost` (the fleet answered 410) or `closed`. */
  get state(): SessionState {
    return this.stateValue
  }

  /**
   * Runs code in the session. Resolves with the result (its status says what happened); throws
   * `SF_ERR_CLIENT_SESSION_LOST` when the fleet answers 410 (the state is gone), and
   * `SF_ERR_CLIENT_SESSION_CLOSED` once this program has closed it.
   */
  async execute(req: Omit<ExecRequest, 'session_id'>, options: CallOptions = {}): Promise<ExecResult> {
    if (this.stateValue === 'closed') throw sessionClosedError(this.id)
    if (this.stateValue === 'lost') throw sessionLostError(this.id)
    const deadline = Date.now() + (options.deadlineMs ?? timeoutMsOf(req) + this.deps.deadlineSlackMs)
    let lost = false
    const result = await withRetries(
      async (signal) => {
        const a = await this.transport.execAttempt(
          `/v1/sessions/${encodeURIComponent(this.id)}/execute`,
          req,
          signal,
          options.signal
        )
        if (a.httpStatus === 410) lost = true
        return a
      },
      {
        policy: this.deps.policy,
        deadline,
        stats: this.deps.stats,
        retriable: (s) => !lost && sessionRetriable(s),
        ...(options.signal ? { signal: options.signal } : {})
      }
    )
    if (lost) {
      this.stateValue = 'lost'
      throw sessionLostError(this.id, result)
    }
    return result
  }

  /** Deletes the session on the fleet; safe to call twice, a session already gone is fine. */
  async close(): Promise<void> {
    if (this.stateValue === 'closed') return
    this.stateValue = 'closed'
    try {
      await this.transport.json(
        'DELETE',
        `/v1/sessions/${encodeURIComponent(this.id)}`,
        undefined,
        AbortSignal.timeout(10_000)
      )
    } catch {
      // the fleet reaps sessions at their TTL; a failed delete leaks nothing for long
    }
  }
}
