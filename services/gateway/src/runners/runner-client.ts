/**
 * How the gateway talks to one runner, wherever it is: over HTTP ({@link HttpRunnerClient}) or
 * in the same process ({@link InProcessRunnerClient}, for `sandfleet serve`). Both implement the
 * protocol's {@link RunnerApi}, as the runner does; this is that contract as the gateway holds
 * it: every answer later (a promise), plus the member's name and `close`.
 */
import type {
  BatchResultListener,
  CallContext,
  ExecRequest,
  ExecResult,
  RunnerApi,
  RunnerInfo,
  RunnerLoad,
  RunnerSessionsApi,
  SessionInfo
} from '@sandfleet/protocol'

export type { BatchResultListener }

/**
 * The session API of one runner. A refusal (no such session, lost, busy, a limit) rejects with
 * a {@link RunnerRefusal} carrying the runner's HTTP status and ErrorBody; no answer at all
 * rejects with a `GatewayError` (`SF_ERR_GATEWAY_RUNNER_UNREACHABLE`).
 */
export interface RunnerSessions extends RunnerSessionsApi {
  get(id: string, key: string): Promise<SessionInfo>
}

/**
 * One runner as the gateway sees it.
 *
 * `execute` and `executeBatch` run in the call's context, which the gateway always gives: a
 * client waits for the runner's `queue_timeout` at its deadline, never giving up on a runner
 * before the runner can answer. They resolve with results whenever the runner answered (any
 * status, `infra_error` included); they reject only when no answer came (connection refused or
 * dropped, a response that is not a result), which the router treats like `infra_error`. For a
 * batch, results already delivered to `onResult` before a rejection stand.
 */
export interface RunnerClient extends RunnerApi {
  execute(request: ExecRequest, context: CallContext): Promise<ExecResult>
  executeBatch(
    requests: ExecRequest[],
    onResult: BatchResultListener | undefined,
    context: CallContext
  ): Promise<ExecResult[]>
  /** Stable name of this member: its URL, or `local:ID`. */
  readonly name: string
  /**
   * How long past a call's queue budget and `timeout_ms` it waits for the runner's answer (the
   * gateway's `callGraceMs`); absent: as long as the runner takes (the in-process runner).
   */
  readonly graceMs?: number
  load(): Promise<RunnerLoad>
  info(): Promise<RunnerInfo>
  /** Its session API (absent: this client cannot reach sessions). */
  readonly sessions?: RunnerSessions | undefined
  /** Frees connections. Idempotent. */
  close(): Promise<void>
}
