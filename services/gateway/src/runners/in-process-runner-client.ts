/**
 * A {@link RunnerClient} around a runner living in the same process (`sandfleet serve`): calls go
 * straight to it, with no HTTP and no JSON round trip.
 */
import type { ErrorBody, ExecRequest, ExecResult, RunnerCallOptions, RunnerInfo, RunnerLoad, SessionCreateRequest, SessionExecRequest, SessionInfo } from '@sandfleet/protocol'
import { RunnerRefusal } from '../errors.ts'
import type { BatchResultListener, CallOptions, RunnerClient, RunnerSessions } from './runner-client.ts'

/** What the gateway needs of an in-process runner's sessions (`services/runner`'s `SessionHost`). */
export interface LocalSessions {
  create(request: SessionCreateRequest, key: string): Promise<SessionInfo>
  get(id: string, key: string): SessionInfo
  execute(id: string, request: SessionExecRequest, key: string): Promise<ExecResult>
  close(id: string, key: string): Promise<void>
}

/**
 * What the gateway needs of an in-process runner. `services/runner`'s `Runner` has this shape;
 * the gateway does not import it (services never depend on each other), the CLI hands it over.
 */
export interface LocalRunner {
  readonly id: string
  /** Never rejects: every outcome is a result. `queueTimeoutMs` is the job's queue budget (the runner's own limit caps it). */
  execute(request: ExecRequest, options?: LocalCallOptions): Promise<ExecResult>
  /** Like `execute` for each item, with one budget for all; results in order. */
  executeBatch(requests: ExecRequest[], onResult?: BatchResultListener, options?: LocalCallOptions): Promise<ExecResult[]>
  load(): RunnerLoad
  /** What it runs (backend, isolation, manifest). */
  info(): RunnerInfo
  /** Its sessions, when it holds any. */
  readonly sessions?: LocalSessions | undefined
}

/** Per-call options of a {@link LocalRunner}: the protocol's {@link RunnerCallOptions}, as `services/runner`'s `ExecuteOptions`. */
export type LocalCallOptions = RunnerCallOptions

/** A thrown session error (`{code, statusCode, status, message}`) as a {@link RunnerRefusal}. */
function refusal (err: unknown): unknown {
  const e = err as { code?: unknown, statusCode?: unknown, status?: unknown, message?: unknown } | null
  if (typeof e?.code !== 'string' || typeof e.statusCode !== 'number') return err
  const body: ErrorBody = { status: (typeof e.status === 'string' ? e.status : 'invalid_request') as ErrorBody['status'], error: { code: e.code, message: String(e.message) } }
  return new RunnerRefusal(e.statusCode, body)
}

/** Wraps a {@link LocalRunner}. Closing the client does not close the runner (its owner does). */
export class InProcessRunnerClient implements RunnerClient {
  readonly name: string
  readonly #runner: LocalRunner

  constructor (runner: LocalRunner) {
    this.#runner = runner
    this.name = `local:${runner.id}`
  }

  execute (request: ExecRequest, options: CallOptions = {}): Promise<ExecResult> {
    return this.#runner.execute(request, options)
  }

  executeBatch (requests: ExecRequest[], onResult?: BatchResultListener, options: CallOptions = {}): Promise<ExecResult[]> {
    return this.#runner.executeBatch(requests, onResult, options)
  }

  async load (): Promise<RunnerLoad> {
    return this.#runner.load()
  }

  async info (): Promise<RunnerInfo> {
    return this.#runner.info()
  }

  /** The runner's sessions, their errors as refusals; undefined when it holds none. */
  get sessions (): RunnerSessions | undefined {
    const local = this.#runner.sessions
    if (local === undefined) return undefined
    const call = async <T>(fn: () => Promise<T> | T): Promise<T> => {
      try { return await fn() } catch (err) { throw refusal(err) }
    }
    return {
      create: async (request, key) => await call(() => local.create(request, key)),
      get: async (id, key) => await call(() => local.get(id, key)),
      execute: async (id, request, key) => await call(() => local.execute(id, request, key)),
      close: async (id, key) => { await call(() => local.close(id, key)) }
    }
  }

  async close (): Promise<void> {}
}
