/**
 * A {@link RunnerClient} around a runner living in the same process (`sandfleet serve`): calls go
 * straight to it, with no HTTP and no JSON round trip.
 */
import type { ExecRequest, ExecResult, RunnerLoad } from '@sandfleet/protocol'
import type { BatchResultListener, CallOptions, RunnerClient } from './runner-client.ts'

/**
 * What the gateway needs of an in-process runner. `services/runner`'s `Runner` has this shape;
 * the gateway does not import it (services never depend on each other), the CLI hands it over.
 */
export interface LocalRunner {
  readonly id: string
  /** Never rejects: every outcome is a result. */
  execute(request: ExecRequest, options?: { signal?: AbortSignal }): Promise<ExecResult>
  executeBatch(requests: ExecRequest[], onResult?: BatchResultListener): Promise<ExecResult[]>
  load(): RunnerLoad
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
    return this.#runner.execute(request, options.signal === undefined ? undefined : { signal: options.signal })
  }

  executeBatch (requests: ExecRequest[], onResult?: BatchResultListener): Promise<ExecResult[]> {
    return this.#runner.executeBatch(requests, onResult)
  }

  async load (): Promise<RunnerLoad> {
    return this.#runner.load()
  }

  async close (): Promise<void> {}
}
