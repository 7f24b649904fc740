/**
 * A pyodide sandbox as the runner sees it: a proxy to a {@link PyodideSandbox} in a host
 * process (pyodide-host-main.ts). The host stops a job at its deadline (soft interrupt, then the
 * isolate terminated). A host that does not answer at all is the pool's to handle: the job's
 * hard deadline answers it `infra_error` (stalled) and closes this sandbox, and a close the host does not
 * answer within `closeTimeoutMs` kills the host (its other sandboxes are replaced). A host that
 * exits fails the job in flight with `SF_ERR_RUNNER_SANDBOX_FAILED` (`infra_error`, never a user
 * status) and tells the pool, through {@link onExit}, that an idle sandbox is gone.
 */
import type { Job, RunOutcome, Sandbox, SandboxState, SandboxStats } from '../../sandbox/contract.ts'
import type { PyodideHost } from './pyodide-host.ts'
import type { HostReply } from './pyodide-host-protocol.ts'
import { RunnerError } from '../../errors.ts'
import { retireReasonOf } from '../../sandbox/retire-reasons.ts'

/** Options of a {@link RemotePyodideSandbox}. */
export interface RemotePyodideSandboxOptions {
  /** Longest a sandbox may take to start. */
  startTimeoutMs: number
  /** Longest the host may take to close a sandbox; past it the host is killed. */
  closeTimeoutMs: number
}

const hung = (ms: number): Promise<'hung'> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms, 'hung').unref()
  })

function fleetError(message: string): Error {
  return new RunnerError('SF_ERR_RUNNER_SANDBOX_FAILED', message)
}

/** One sandbox in a host process; see the module comment. */
export class RemotePyodideSandbox implements Sandbox {
  #state: SandboxState = 'starting'
  #host: PyodideHost | undefined
  #stats: SandboxStats = { jobs: 0 }
  #exitListener: (() => void) | undefined
  #unwatch: (() => void) | undefined
  #hostGone = false
  /** Fails the request in flight (a close while it runs). */
  #abort: ((err: Error) => void) | undefined

  /** `host` gives the live host (starting one if needed). */
  constructor(
    readonly id: string,
    private readonly host: () => Promise<PyodideHost>,
    private readonly options: RemotePyodideSandboxOptions
  ) {}

  /** The lifecycle state. */
  get state(): SandboxState {
    return this.#state
  }

  /** Boots the sandbox in the host (starting a host first if none is alive). */
  async start(): Promise<void> {
    try {
      const host = await this.host()
      if (this.#state !== 'starting') throw new Error(`sandbox ${this.id} was closed while it started`)
      this.#host = host
      this.#unwatch = host.onExit(() => {
        this.#hostExited()
      })
      const reply = await this.#within({ op: 'start', sandbox: this.id }, this.options.startTimeoutMs)
      if (reply === 'hung') {
        host.kill(`it did not start sandbox ${this.id} within ${this.options.startTimeoutMs} ms`)
        throw new Error(`the pyodide host did not start sandbox ${this.id} within ${this.options.startTimeoutMs} ms`)
      }
      if (reply.error !== undefined) throw new Error(reply.error.message)
      if (reply.stats !== undefined) this.#stats = reply.stats
      if (this.#state !== 'starting') throw new Error(`sandbox ${this.id} was closed while it started`)
      this.#state = 'ready'
    } catch (err) {
      await this.close()
      throw new Error(`pyodide sandbox ${this.id} did not start: ${(err as Error).message}`, { cause: err })
    }
  }

  /** Runs one job in the host; see the module comment. */
  async execute(job: Job): Promise<RunOutcome> {
    if (this.#state !== 'ready') throw new Error(`sandbox ${this.id} is ${this.#state}`)
    this.#state = 'busy'
    let reply: HostReply
    try {
      reply = await this.#request({ op: 'exec', sandbox: this.id, job })
    } catch (err) {
      if (this.#state === 'busy') this.#state = 'closing'
      throw err
    }
    if (reply.stats !== undefined) this.#stats = reply.stats
    if (reply.error !== undefined || reply.outcome === undefined) {
      if (this.#state === 'busy') this.#state = 'closing'
      throw fleetError(reply.error?.message ?? `the pyodide host sent no outcome for sandbox ${this.id}`)
    }
    const outcome = reply.outcome
    // The host is another process: what it says becomes a metric's label only once checked.
    if (outcome.retire === true) outcome.retire_reason = retireReasonOf(outcome.retire_reason)
    if (this.#state === 'busy') this.#state = outcome.retire === true ? 'closing' : 'ready'
    return outcome
  }

  /** Jobs run and the isolate's memory, as the host last reported them. */
  stats(): SandboxStats {
    return this.#stats
  }

  /** Calls `listener` once if the host exits while this sandbox is open (at once if it already has). */
  onExit(listener: () => void): void {
    if (this.#hostGone && this.#state !== 'closed') {
      listener()
      return
    }
    this.#exitListener = listener
  }

  /**
   * Closes the sandbox in the host (nothing to do when the host is gone); a host that does not
   * answer within `closeTimeoutMs` is killed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#state === 'closed') return
    this.#state = 'closed'
    this.#unwatch?.()
    this.#abort?.(fleetError(`sandbox ${this.id} was closed while its request ran`))
    const host = this.#host
    if (host?.alive === true) {
      let reply: HostReply | 'hung' | undefined
      try {
        reply = await this.#within({ op: 'close', sandbox: this.id }, this.options.closeTimeoutMs)
      } catch {}
      if (reply === 'hung') host.kill(`it did not close sandbox ${this.id} within ${this.options.closeTimeoutMs} ms`)
    }
  }

  /** One request to the host, failed at once by a {@link close} while it runs. */
  async #request(request: Parameters<PyodideHost['request']>[0]): Promise<HostReply> {
    const host = this.#host
    if (host === undefined) throw fleetError(`sandbox ${this.id} has no host`)
    const aborted = new Promise<never>((_resolve, reject) => {
      this.#abort = reject
    })
    try {
      return await Promise.race([host.request(request), aborted])
    } finally {
      this.#abort = undefined
    }
  }

  /** {@link #request}, or `'hung'` when the host gave no answer within `ms`. */
  async #within(request: Parameters<PyodideHost['request']>[0], ms: number): Promise<HostReply | 'hung'> {
    return await Promise.race([this.#request(request), hung(ms)])
  }

  #hostExited(): void {
    this.#hostGone = true
    if (this.#state === 'closed') return
    if (this.#state !== 'busy' && this.#state !== 'starting') this.#state = 'closing'
    const listener = this.#exitListener
    this.#exitListener = undefined
    listener?.()
  }
}
