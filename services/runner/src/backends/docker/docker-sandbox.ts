/**
 * One pool slot of the docker backend: a long-lived, hardened container whose main process is
 * the executor, booted (or taken from the driver's warm spares) at start and spoken to through
 * its {@link DockerContainer}; made by {@link DockerDriver.createSandbox}.
 */
import { messageOf } from '@sandfleet/protocol/http'
import type { Job, JobWatch, RunOutcome, Sandbox, SandboxState, SandboxStats } from '../../sandbox/contract.ts'
import type { DockerContainer } from './docker-container.ts'
import { DockerDriverError, type DockerDriverOptions } from './docker-engine.ts'

/** How long the engine may take to say a container's process count. */
const PIDS_WAIT_MS = 3000
/** A container holding at least this share of its process limit fills it (the executor's own processes count too). */
const PIDS_FULL = 0.9

/** What a sandbox gets from its driver: a booted container (a spare or a new one), and a call when it closed. */
export interface SandboxHooks {
  boot: () => Promise<DockerContainer>
  closed: () => void
}

/** One pool slot: a long-lived container running the executor. */
export class DockerSandbox implements Sandbox {
  readonly id: string
  #state: SandboxState = 'starting'
  #jobs = 0
  /** The engine already said this container was OOM-killed (a flag it never clears). */
  #oomSeen = false
  #booted: DockerContainer | undefined
  #booting: Promise<DockerContainer> | undefined
  #closing: Promise<void> | undefined
  readonly #opts: Readonly<DockerDriverOptions>
  readonly #hooks: SandboxHooks
  readonly #exitListeners: Array<() => void> = []

  /** Made by {@link DockerDriver.createSandbox}; not started. */
  constructor(id: string, opts: Readonly<DockerDriverOptions>, hooks: SandboxHooks) {
    this.id = id
    this.#opts = opts
    this.#hooks = hooks
  }

  get state(): SandboxState {
    return this.#state
  }

  /** The container's id once booted (for tests and logs). */
  get containerId(): string | undefined {
    return this.#booted?.container.id
  }

  /** Takes a warm spare or boots a container (create, attach before start, wait for `ready`). */
  async start(): Promise<void> {
    try {
      this.#booting = this.#hooks.boot()
      const booted = await this.#booting
      this.#booted = booted
      booted.name = this.id
      if (this.#closing !== undefined) throw new Error('closed while starting')
      if (booted.exited) throw new Error(`the container exited before its first job${await booted.exitReason()}`)
      booted.onExit(() => {
        if (this.#closing === undefined) for (const listener of this.#exitListeners.splice(0)) listener()
      })
      this.#state = 'ready'
    } catch (err) {
      await this.close()
      throw new DockerDriverError(
        'SF_ERR_RUNNER_DOCKER_CONTAINER',
        `sandbox ${this.id}: the container did not become ready: ${messageOf(err)}`,
        err
      )
    }
  }

  /** Runs one job through the executor; maps a dead container to `memory` (OOM) or `killed`. */
  async execute(job: Job, watch?: JobWatch): Promise<RunOutcome> {
    const booted = this.#booted
    if (this.#state !== 'ready' || booted === undefined) {
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', `sandbox ${this.id} is ${this.#state}, not ready`)
    }
    if (booted.exited) {
      // Died while idle (killed from outside, the engine restarted): the fleet's fault, not the code's.
      this.#state = 'closing'
      throw new DockerDriverError(
        'SF_ERR_RUNNER_DOCKER_CONTAINER',
        `sandbox ${this.id}: the container is gone${await booted.exitReason()}`
      )
    }
    this.#state = 'busy'
    let outcome: RunOutcome
    try {
      outcome = await booted.channel.run(job, watch)
    } catch (err) {
      this.#state = 'closing'
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', `sandbox ${this.id}: ${messageOf(err)}`, err)
    }
    this.#jobs++
    // A kill the executor could not name: the engine's OOMKilled says whether the container's
    // OOM killer struck. It stays set once set, so only a change since the last look is this job's.
    if (outcome.status === 'killed' && !this.#oomSeen && (await booted.oomKilled())) {
      this.#oomSeen = true
      outcome = {
        ...outcome,
        status: 'memory',
        error: {
          type: 'MemoryError',
          message: `the sandbox ran out of memory (container limit ${this.#opts.memoryMb} MiB)`
        }
      }
      if (outcome.retire === true) outcome.retire_reason = 'oom'
    }
    const k = this.#opts.jobsPerContainer
    if (k > 0 && this.#jobs >= k && outcome.retire !== true)
      outcome = { ...outcome, retire: true, retire_reason: 'max_jobs' }
    this.#state = outcome.retire === true ? 'closing' : 'ready'
    return outcome
  }

  stats(): SandboxStats {
    return { jobs: this.#jobs }
  }

  /** What of its limits the container is at: its processes filling its pids limit; see the contract. */
  async exhausted(): Promise<string | undefined> {
    const pids = await this.#booted?.pids(PIDS_WAIT_MS)
    if (pids === undefined || pids.current < PIDS_FULL * pids.limit) return undefined
    return `its processes fill its limit (${pids.current} of ${pids.limit})`
  }

  /** `listener` runs once if the container dies while the sandbox is not being closed. */
  onExit(listener: () => void): void {
    this.#exitListeners.push(listener)
  }

  /** Shuts the executor down and force-removes the container. Idempotent. */
  async close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = 'closing'
      this.#exitListeners.length = 0
      // Closed while booting: the container is removed once it is up.
      const booted = this.#booted ?? (await this.#booting?.catch(() => undefined))
      await booted?.remove()
      this.#state = 'closed'
      this.#hooks.closed()
    })()
    await this.#closing
  }
}
