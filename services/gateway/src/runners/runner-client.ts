/**
 * How the gateway talks to one runner, wherever it is: over HTTP ({@link HttpRunnerClient}) or
 * in the same process ({@link InProcessRunnerClient}, for `sandfleet serve`).
 */
import type { ExecRequest, ExecResult, RunnerCallOptions, RunnerInfo, RunnerLoad, SessionCreateRequest, SessionExecRequest, SessionInfo } from '@sandfleet/protocol'

/** Called as each item of a batch finishes, in completion order. */
export type BatchResultListener = (index: number, result: ExecResult) => void

/**
 * Per-call options: the protocol's {@link RunnerCallOptions}. A client waits for the runner's
 * `queue_timeout` at `queueTimeoutMs`: it never gives up on a runner before the runner can answer.
 */
export type CallOptions = RunnerCallOptions

/**
 * The session API of one runner. A refusal (no such session, lost, busy, a limit) rejects with
 * a {@link RunnerRefusal} carrying the runner's HTTP status and ErrorBody; no answer at all
 * rejects with a `GatewayError` (`SF_ERR_GATEWAY_RUNNER_UNREACHABLE`).
 */
export interface RunnerSessions {
  /** Opens a session for `key` (a digest of the caller's API key, '' without one). */
  create(request: SessionCreateRequest, key: string): Promise<SessionInfo>
  /** The session's info; `key` must be the one it was opened with (else not found). */
  get(id: string, key: string): Promise<SessionInfo>
  /** Runs one cell; resolves with its result for every outcome of the code. */
  execute(id: string, request: SessionExecRequest, key: string, options?: CallOptions): Promise<ExecResult>
  close(id: string, key: string): Promise<void>
}

/**
 * One runner as the gateway sees it.
 *
 * `execute` and `executeBatch` resolve with results whenever the runner answered (any status,
 * `infra_error` included); they reject only when no answer came (connection refused or dropped,
 * a response that is not a result), which the router treats like `infra_error`. For a batch,
 * results already delivered to `onResult` before a rejection stand.
 */
export interface RunnerClient {
  /** Stable name of this member: its URL, or `local`. */
  readonly name: string
  execute(request: ExecRequest, options?: CallOptions): Promise<ExecResult>
  executeBatch(requests: ExecRequest[], onResult?: BatchResultListener, options?: CallOptions): Promise<ExecResult[]>
  load(): Promise<RunnerLoad>
  /** What it runs (`GET /v1/info`: backend, isolation, environment manifest); absent: this client cannot ask. */
  info?(): Promise<RunnerInfo>
  /** Its session API (absent: this client cannot reach sessions). */
  readonly sessions?: RunnerSessions
  /** Frees connections. Idempotent. */
  close(): Promise<void>
}
