/**
 * How the gateway talks to one runner, wherever it is: over HTTP ({@link HttpRunnerClient}) or
 * in the same process ({@link InProcessRunnerClient}, for `sandfleet serve`).
 */
import type { ExecRequest, ExecResult, RunnerLoad } from '@sandfleet/protocol'

/** Called as each item of a batch finishes, in completion order. */
export type BatchResultListener = (index: number, result: ExecResult) => void

/** Per-call options. */
export interface CallOptions {
  /** Aborted when the caller went away: the runner may drop the job. */
  signal?: AbortSignal
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
  /** Frees connections. Idempotent. */
  close(): Promise<void>
}
