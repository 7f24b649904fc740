/**
 * What a gateway asks of a runner, written once. The runner (`services/runner`'s `Runner`)
 * implements it in its process; the gateway's clients implement it over HTTP (the runner's
 * internal API: `RUNNER_PATHS`, `RUNNER_SESSION_PATHS`) and in the same process (`sandfleet
 * serve`). Each declares `implements RunnerApi`, so the compiler holds all three to one shape.
 */
import type { ExecRequest, ExecResult } from './exec.ts'
import type { RunnerInfo } from './info.ts'
import type { CallContext } from './call-context.ts'
import type { JudgeRequest, JudgeResult } from './judge.ts'
import type { RunnerLoad } from './runner.ts'
import type { SessionCreateRequest, SessionExecRequest, SessionInfo } from './session.ts'
import type { RunnerSandboxesApi } from './sandbox.ts'

/** A value now (the runner, in its process) or later (a client of a runner elsewhere). */
export type Awaitable<T> = T | Promise<T>

/** Called as each item of a batch finishes, in completion order, with its index in the batch. */
export type BatchResultListener = (index: number, result: ExecResult) => void

/** Called as each judge of a batch finishes, in completion order, with its index in the batch. */
export type JudgeBatchResultListener = (index: number, result: JudgeResult) => void

/**
 * A runner's sessions (`maxSessions`), each keyed by the caller's key (a digest of its API key,
 * '' without one): a session answers only the key that opened it. A refusal (no such session,
 * lost, busy, a limit) throws, or rejects, with an error carrying the stable `code` and the
 * HTTP `statusCode` (docs/errors.md: `SF_ERR_SESSION_…`).
 */
export interface RunnerSessionsApi {
  /** Opens a session for `key`. */
  create(request: SessionCreateRequest, key: string): Promise<SessionInfo>
  /** The session's info. */
  get(id: string, key: string): Awaitable<SessionInfo>
  /** Runs one cell; resolves with its result for every outcome of the code. */
  execute(id: string, request: SessionExecRequest, key: string, context?: CallContext): Promise<ExecResult>
  /** Closes the session. */
  close(id: string, key: string): Promise<void>
}

/**
 * One runner as a gateway uses it. `execute`, `executeBatch`, `judge` and `judgeBatch` answer every outcome of a job as
 * a result (`invalid_request` over the runner's limits, `overloaded`, `queue_timeout`,
 * `infra_error`, a status of the user's code); the runner itself never rejects them, and a client
 * rejects only when no answer came. Readiness is the load report's `state`.
 */
export interface RunnerApi {
  /** Runs one request, in `context` (none: the runner's own limits alone). */
  execute(request: ExecRequest, context?: CallContext): Promise<ExecResult>
  /**
   * Runs many in one `context` (one deadline for all); resolves with the results in request
   * order, and `onResult` sees each as it finishes.
   */
  executeBatch(requests: ExecRequest[], onResult?: BatchResultListener, context?: CallContext): Promise<ExecResult[]>
  /**
   * Judges one program against its tests in one sandbox (`POST /v1/judge`), in `context`: resolves with its verdict
   * for every outcome, as `execute` does (a fleet fault is the verdict `overloaded`, `queue_timeout` or `infra_error`;
   * a request over the runner's limits, or in a language it does not serve, `invalid_request`).
   */
  judge(request: JudgeRequest, context?: CallContext): Promise<JudgeResult>
  /**
   * Judges many in one `context` (one deadline for all; `POST /v1/judge/batch`); resolves with the results in request
   * order, and `onResult` sees each as it finishes.
   */
  judgeBatch(
    requests: JudgeRequest[],
    onResult?: JudgeBatchResultListener,
    context?: CallContext
  ): Promise<JudgeResult[]>
  /** Capacity, load and lifecycle state, to route by (`GET /v1/runner/load`). */
  load(): Awaitable<RunnerLoad>
  /** What it runs: backend, isolation, environment manifest (`GET /v1/info`). */
  info(): Awaitable<RunnerInfo>
  /** Its sessions; undefined when it holds none (or, for a client, cannot reach them). */
  readonly sessions?: RunnerSessionsApi | undefined
  /** Its sandboxes (sessions with files, processes and code contexts); undefined when it holds no sessions. */
  readonly sandboxes?: RunnerSandboxesApi | undefined
}
