/**
 * A {@link RunnerClient} around a runner living in the same process (`sandfleet serve`): calls go
 * straight to it, with no HTTP and no JSON round trip, their context as it is (one process, one
 * `performance.now()` clock for its deadline).
 */
import type {
  CallContext,
  ErrorBody,
  ExecRequest,
  ExecResult,
  JudgeBatchResultListener,
  JudgeRequest,
  JudgeResult,
  RunnerApi,
  RunnerInfo,
  RunnerLoad
} from '@sandfleet/protocol'
import { RunnerRefusal } from '../errors.ts'
import type { BatchResultListener, RunnerClient, RunnerSandboxes, RunnerSessions } from './runner-client.ts'

/**
 * What the gateway needs of an in-process runner: the protocol's {@link RunnerApi} and the
 * runner's id. `services/runner`'s `Runner` implements it; the gateway does not import it
 * (services never depend on each other), the CLI hands it over.
 */
export interface LocalRunner extends RunnerApi {
  readonly id: string
}

/** A thrown session error (`{code, statusCode, status, message}`) as a {@link RunnerRefusal}. */
function refusal(err: unknown): unknown {
  const e = err as { code?: unknown; statusCode?: unknown; status?: unknown; message?: unknown; field?: unknown } | null
  if (typeof e?.code !== 'string' || typeof e.statusCode !== 'number') return err
  const body: ErrorBody = {
    status: (typeof e.status === 'string' ? e.status : 'invalid_request') as ErrorBody['status'],
    error: { code: e.code, message: String(e.message) }
  }
  if (typeof e.field === 'string' && e.field !== '') body.error.field = e.field
  return new RunnerRefusal(e.statusCode, body)
}

/** Wraps a {@link LocalRunner}. Closing the client does not close the runner (its owner does). */
export class InProcessRunnerClient implements RunnerClient {
  readonly name: string
  readonly #runner: LocalRunner

  constructor(runner: LocalRunner) {
    this.#runner = runner
    this.name = `local:${runner.id}`
  }

  execute(request: ExecRequest, context: CallContext): Promise<ExecResult> {
    return this.#runner.execute(request, context)
  }

  executeBatch(
    requests: ExecRequest[],
    onResult: BatchResultListener | undefined,
    context: CallContext
  ): Promise<ExecResult[]> {
    return this.#runner.executeBatch(requests, onResult, context)
  }

  judge(request: JudgeRequest, context: CallContext): Promise<JudgeResult> {
    return this.#runner.judge(request, context)
  }

  judgeBatch(
    requests: JudgeRequest[],
    onResult: JudgeBatchResultListener | undefined,
    context: CallContext
  ): Promise<JudgeResult[]> {
    return this.#runner.judgeBatch(requests, onResult, context)
  }

  async load(): Promise<RunnerLoad> {
    return await this.#runner.load()
  }

  async info(): Promise<RunnerInfo> {
    return await this.#runner.info()
  }

  /** The runner's sessions, their errors as refusals; undefined when it holds none. */
  get sessions(): RunnerSessions | undefined {
    const local = this.#runner.sessions
    if (local === undefined) return undefined
    const call = async <T>(fn: () => Promise<T> | T): Promise<T> => {
      try {
        return await fn()
      } catch (err) {
        throw refusal(err)
      }
    }
    return {
      create: async (request, key) => await call(() => local.create(request, key)),
      get: async (id, key) => await call(() => local.get(id, key)),
      execute: async (id, request, key, context) => await call(() => local.execute(id, request, key, context)),
      close: async (id, key) => {
        await call(() => local.close(id, key))
      }
    }
  }

  /** The runner's sandboxes, their errors as refusals; undefined when it holds none. */
  get sandboxes(): RunnerSandboxes | undefined {
    const local = this.#runner.sandboxes
    if (local === undefined) return undefined
    return {
      create: async (request, key) => await refusing(() => local.create(request, key)),
      list: async (key) => await refusing(() => local.list(key)),
      call: async (id, auth, request, context) => await refusing(() => local.call(id, auth, request, context)),
      stream: async (id, auth, request, onEvent, signal) =>
        await refusing(() => local.stream(id, auth, request, onEvent, signal))
    }
  }

  async close(): Promise<void> {}
}

/** Runs `fn`, a thrown session or sandbox error turned into a {@link RunnerRefusal}. */
async function refusing<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw refusal(err)
  }
}
