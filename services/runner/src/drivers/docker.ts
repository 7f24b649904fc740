/**
 * The docker driver: one long-lived, hardened container per pool slot, the executor its main
 * process (behind Docker's init), spoken to over the attached stdin/stdout stream through the
 * shared {@link ExecutorChannel}. Never `docker exec` per call: a job is one frame each way.
 *
 * @example
 * ```ts
 * const driver = new DockerDriver({ runnerId: 'runner-1' })
 * await driver.check()                 // engine up, image present, stale containers removed
 * const sandbox = driver.createSandbox('docker-0')
 * await sandbox.start()
 * const outcome = await sandbox.execute({ request, maxOutputBytes: 65536 })
 * await driver.close()                 // every container of runner-1 removed
 * ```
 */
import { PassThrough } from 'node:stream'
import type { Duplex } from 'node:stream'
import type Docker from 'dockerode'
import type { Language } from '@sandfleet/protocol'
import type { Driver, IsolationReport, Job, RunOutcome, Sandbox, SandboxState, SandboxStats } from './driver.ts'
import { ExecutorChannel } from './executor-channel.ts'
import {
  DockerDriverError, DockerEngine, resolveDockerOptions,
  type DockerDriverInput, type DockerDriverOptions, type ImageManifest
} from './docker-engine.ts'

/** Logger the driver writes its diagnostics to (the runner passes its pino child). */
export interface DockerDriverLogger {
  info: (fields: Record<string, unknown>, msg?: string) => void
  warn: (fields: Record<string, unknown>, msg?: string) => void
}

/** Options of {@link DockerDriver}: the engine options plus an optional logger. */
export type DockerDriverConfig = DockerDriverInput & { logger?: DockerDriverLogger }

/** Backend `docker`: makes {@link DockerSandbox}es; see the module comment. */
export class DockerDriver implements Driver {
  readonly name = 'docker' as const
  readonly languages: readonly Language[] = ['python']
  /** The resolved, frozen options (defaults applied). */
  readonly options: Readonly<DockerDriverOptions>
  readonly #engine: DockerEngine
  readonly #logger?: DockerDriverLogger
  readonly #sandboxes = new Set<DockerSandbox>()
  #manifest: ImageManifest | undefined
  #closing: Promise<void> | undefined

  constructor (config: DockerDriverConfig) {
    const { logger, ...input } = config
    this.options = resolveDockerOptions(input)
    this.#engine = new DockerEngine(this.options)
    this.#logger = logger
  }

  /** Engine up, image present; removes stale containers of this runner and reads the manifest. */
  async check (): Promise<void> {
    await this.#engine.check()
    const stale = await this.#engine.removeContainers()
    if (stale > 0) this.#logger?.warn({ stale, runner: this.options.runnerId }, 'removed stale sandbox containers')
    this.#manifest = await this.#engine.readManifest()
  }

  /** The image's manifest (Python and package versions), read by {@link check}. */
  manifest (): ImageManifest | undefined {
    return this.#manifest
  }

  createSandbox (id: string): Sandbox {
    if (this.#closing !== undefined) throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', 'the docker driver is closed')
    const sandbox = new DockerSandbox(id, this.#engine, this.options, this.#logger, () => this.#sandboxes.delete(sandbox))
    this.#sandboxes.add(sandbox)
    return sandbox
  }

  describe (): IsolationReport {
    const o = this.options
    const env = this.#manifest === undefined ? '' : `, Python ${this.#manifest.python}`
    return {
      driver: 'docker',
      boundary: `Docker container per slot (${o.image}${env}): network ${o.networkMode}, ` +
        `${o.readOnlyRoot ? 'read-only root' : 'writable root'}, uid ${o.user}, no capabilities, ` +
        `cgroup memory ${o.memoryMb} MiB / pids ${o.pidsLimit} / ${o.cpus} CPU`,
      properties: [
        `network: NetworkMode ${o.networkMode}${o.networkMode === 'none' ? ' (loopback only, no route out)' : ''}`,
        `filesystem: ${o.readOnlyRoot ? 'read-only image root' : 'writable image root'}, ${o.tmpfsMb} MiB tmpfs at /tmp (the jobs' work dir, emptied after each job)`,
        `privileges: uid ${o.user}, CapDrop ALL, no-new-privileges, Docker's default seccomp profile`,
        `resources: memory = memory+swap = ${o.memoryMb} MiB, pids ${o.pidsLimit}, CPU quota ${o.cpus}, nofile ${o.nofile}`,
        'jobs: a fresh forked child per job inside the container; the container is replaced after a timeout, an OOM kill, a crash or ' +
          `${o.jobsPerContainer > 0 ? String(o.jobsPerContainer) : 'unlimited'} jobs`,
        'shared kernel: a kernel exploit escapes any container; use a VM-backed runtime (gVisor, Kata) for that threat'
      ]
    }
  }

  /** Closes every sandbox and removes any container still labelled with this runner. Idempotent. */
  async close (): Promise<void> {
    this.#closing ??= (async () => {
      await Promise.all([...this.#sandboxes].map(async (s) => await s.close()))
      await this.#engine.removeContainers().catch(() => 0)
    })()
    await this.#closing
  }
}

/** One pool slot: a long-lived container running the executor. */
export class DockerSandbox implements Sandbox {
  readonly id: string
  #state: SandboxState = 'starting'
  #jobs = 0
  #container: Docker.Container | undefined
  #stream: Duplex | undefined
  #channel: ExecutorChannel | undefined
  #closing: Promise<void> | undefined
  readonly #engine: DockerEngine
  readonly #opts: Readonly<DockerDriverOptions>
  readonly #logger?: DockerDriverLogger
  readonly #onClosed: () => void
  readonly #exitListeners: Array<() => void> = []

  /** Made by {@link DockerDriver.createSandbox}; not started. */
  constructor (id: string, engine: DockerEngine, opts: Readonly<DockerDriverOptions>, logger: DockerDriverLogger | undefined, onClosed: () => void) {
    this.id = id
    this.#engine = engine
    this.#opts = opts
    this.#logger = logger
    this.#onClosed = onClosed
  }

  get state (): SandboxState {
    return this.#state
  }

  /** The container's id once created (for tests and logs). */
  get containerId (): string | undefined {
    return this.#container?.id
  }

  /** Creates the container, attaches before starting it (no output lost), waits for `ready`. */
  async start (): Promise<void> {
    try {
      const container = await this.#engine.docker.createContainer(this.#engine.containerSpec(this.id))
      this.#container = container
      if (this.#closing !== undefined) throw new Error('closed while starting')
      const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }) as unknown as Duplex
      this.#stream = stream
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      container.modem.demuxStream(stream, stdout, stderr)
      stream.on('end', () => { stdout.end(); stderr.end(); this.#exited() })
      stream.on('error', () => { stdout.end(); stderr.end(); this.#exited() })
      stream.on('close', () => { this.#exited() })
      stderr.setEncoding('utf8')
      stderr.on('data', (text: string) => this.#logger?.warn({ sandbox: this.id, stderr: text.slice(0, 2000) }, 'executor stderr'))
      this.#channel = new ExecutorChannel(stdout, stream, {
        graceMs: this.#opts.graceMs,
        onLog: (level: string, message: string) => this.#logger?.info({ sandbox: this.id, level }, message),
        onHung: () => { void this.#kill() }
      })
      await container.start()
      await this.#channel.ready(this.#opts.readyTimeoutMs)
      if (this.#closing !== undefined) throw new Error('closed while starting')
      this.#state = 'ready'
    } catch (err) {
      const why = await this.#exitReason()
      await this.close()
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER',
        `sandbox ${this.id}: the container did not become ready: ${messageOf(err)}${why}`, err)
    }
  }

  /** Runs one job through the executor; maps a dead container to `memory` (OOM) or `killed`. */
  async execute (job: Job): Promise<RunOutcome> {
    const channel = this.#channel
    if (this.#state !== 'ready' || channel === undefined) {
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', `sandbox ${this.id} is ${this.#state}, not ready`)
    }
    if (channel.closed) {
      // Died while idle (killed from outside, the engine restarted): the fleet's fault, not the code's.
      this.#state = 'closing'
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', `sandbox ${this.id}: the container is gone${await this.#exitReason()}`)
    }
    this.#state = 'busy'
    let outcome: RunOutcome
    try {
      outcome = await channel.run(job)
    } catch (err) {
      this.#state = 'closing'
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', `sandbox ${this.id}: ${messageOf(err)}`, err)
    }
    this.#jobs++
    if (outcome.status === 'killed' && await this.#oomKilled()) {
      outcome = { ...outcome, status: 'memory', retire: true, error: { type: 'MemoryError', message: `the sandbox ran out of memory (container limit ${this.#opts.memoryMb} MiB)` } }
    }
    const k = this.#opts.jobsPerContainer
    if (k > 0 && this.#jobs >= k) outcome = { ...outcome, retire: true }
    this.#state = outcome.retire === true ? 'closing' : 'ready'
    return outcome
  }

  stats (): SandboxStats {
    return { jobs: this.#jobs }
  }

  /** `listener` runs once if the container's stream ends while the sandbox is not being closed. */
  onExit (listener: () => void): void {
    this.#exitListeners.push(listener)
  }

  #exited (): void {
    if (this.#closing !== undefined || this.#state === 'starting') return
    for (const listener of this.#exitListeners.splice(0)) listener()
  }

  /** Shuts the executor down and force-removes the container. Idempotent. */
  async close (): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = 'closing'
      try { this.#channel?.close() } catch {}
      this.#stream?.destroy()
      await this.#container?.remove({ force: true }).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 404) this.#logger?.warn({ sandbox: this.id, err: messageOf(err) }, 'container removal failed')
      })
      this.#state = 'closed'
      this.#onClosed()
    })()
    await this.#closing
  }

  /** Hung executor: kill the whole container (the channel then answers the job). */
  async #kill (): Promise<void> {
    await this.#container?.kill().catch(() => {})
  }

  async #oomKilled (): Promise<boolean> {
    const info = await this.#container?.inspect().catch(() => undefined)
    return info?.State.OOMKilled === true
  }

  async #exitReason (): Promise<string> {
    const info = await this.#container?.inspect().catch(() => undefined)
    if (info === undefined || info.State.Running) return ''
    return ` (container exited ${info.State.ExitCode}${info.State.OOMKilled ? ', OOM-killed' : ''}${info.State.Error !== '' ? `: ${info.State.Error}` : ''})`
  }
}

function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
