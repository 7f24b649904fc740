/**
 * The docker driver: one long-lived, hardened container per pool slot, the executor its main
 * process (behind Docker's init), spoken to over the attached stdin/stdout stream through the
 * shared ExecutorChannel (held by a {@link DockerContainer}). Never `docker exec` per call: a job
 * is one frame each way.
 *
 * Warm spares: once no sandbox is starting, the driver boots `spares` (default 1) containers
 * ahead of need; a sandbox that starts takes one when there is one, so replacing a sandbox (after
 * what its executor could not undo, the death of its executor or a crash; a job's timeout, memory
 * or kill alone keeps the container) is a hand-over, not a container boot (the spare is booted
 * again in the background). A container that dies while idle is reported through `onExit`, and
 * the pool replaces it before a job meets it.
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
import type { Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import { EXECUTOR_RETIRES, EXECUTOR_SOFT_STOP_MS } from '../../kits/executor/executor-channel.ts'
import type { SandboxLife } from '../../sandbox/retire-reasons.ts'
import type { Driver, DriverOptions, IsolationReport, Sandbox } from '../../sandbox/contract.ts'
import type { DockerSettings } from './docker-config.ts'
import { DockerContainer } from './docker-container.ts'
import { DockerSandbox } from './docker-sandbox.ts'
import {
  DockerDriverError,
  DockerEngine,
  resolveDockerOptions,
  type DockerDriverInput,
  type DockerDriverOptions,
  type ImageManifest
} from './docker-engine.ts'

/** Logger the driver writes its diagnostics to (the runner passes its pino child). */
export interface DockerDriverLogger {
  info: (fields: Record<string, unknown>, msg?: string) => void
  warn: (fields: Record<string, unknown>, msg?: string) => void
}

/** Options of {@link DockerDriver}: the engine options, warm spares, and an optional logger. */
export type DockerDriverConfig = DockerDriverInput & {
  logger?: DockerDriverLogger
  /** Containers booted ahead of need, handed to the next sandbox that starts (default 1; 0: none). */
  spares?: number
}

/** The docker driver of the runner's configuration (the keys {@link DockerSettings} names). */
export function dockerDriver(options: DriverOptions<DockerSettings>): DockerDriver {
  const { config } = options
  return new DockerDriver({
    runnerId: config.id,
    logger: options.logger,
    image: config.dockerImage,
    executorPath: config.executorPath,
    spares: config.dockerSpares,
    jobsPerContainer: config.maxJobsPerSandbox,
    isolation: config.isolation,
    ...(options.events === undefined ? {} : { events: options.events }),
    ...(config.dockerChannel === 'auto' ? {} : { channel: config.dockerChannel }),
    ...(config.sandboxMemoryMb > 0 ? { memoryMb: config.sandboxMemoryMb } : {}),
    ...(config.sandboxPids > 0 ? { pidsLimit: config.sandboxPids } : {})
  })
}

/** Backend `docker`: makes {@link DockerSandbox}es; see the module comment. */
export class DockerDriver implements Driver {
  readonly name = 'docker' as const
  readonly languages: readonly Language[] = ['python']
  /** The executor's own stop: SIGTERM at `timeout_ms`, SIGKILL `EXECUTOR_SOFT_STOP_MS` later. */
  readonly stopMs = EXECUTOR_SOFT_STOP_MS
  /** Every job end is survived; the executor's reasons, the container's OOM killer, its job limit. */
  readonly life: SandboxLife = {
    noun: 'container',
    keeps: ['timeout', 'memory', 'killed'],
    retires: [...EXECUTOR_RETIRES, 'oom', 'max_jobs', 'exhausted']
  }
  /** The executor judges a whole program in one job (its `judge` frame). */
  readonly judges = true
  /** The resolved, frozen options (defaults applied). */
  readonly options: Readonly<DockerDriverOptions>
  /** Warm spares kept once the pool is up. */
  readonly spares: number
  readonly #engine: DockerEngine
  readonly #logger?: DockerDriverLogger
  readonly #sandboxes = new Set<DockerSandbox>()
  readonly #spares: DockerContainer[] = []
  readonly #bootingSpares = new Set<Promise<void>>()
  #startingSandboxes = 0
  #spareSeq = 0
  #manifest: ImageManifest | undefined
  #closing: Promise<void> | undefined

  constructor(config: DockerDriverConfig) {
    const { logger, spares, ...input } = config
    this.options = resolveDockerOptions(input)
    this.spares = spares ?? 1
    this.#engine = new DockerEngine(this.options)
    this.#logger = logger
  }

  /** Engine up, image present; removes stale containers of this runner and reads the manifest. */
  async check(): Promise<void> {
    await this.#engine.check()
    // The stale containers are listed before the manifest's own (labelled) container exists.
    const ids = await this.#engine.listContainers()
    const [stale, manifest] = await Promise.all([this.#engine.removeContainers(ids), this.#engine.readManifest()])
    if (stale > 0) this.#logger?.warn({ stale, runner: this.options.runnerId }, 'removed stale sandbox containers')
    this.#manifest = manifest
  }

  /** The image's manifest (Python and package versions), read by {@link check}. */
  manifest(): ImageManifest | undefined {
    return this.#manifest
  }

  createSandbox(id: string): Sandbox {
    if (this.#closing !== undefined)
      throw new DockerDriverError('SF_ERR_RUNNER_DOCKER_CONTAINER', 'the docker driver is closed')
    const sandbox: DockerSandbox = new DockerSandbox(id, this.options, {
      boot: async () => {
        this.#startingSandboxes++
        try {
          return this.#takeSpare() ?? (await DockerContainer.boot(this.#engine, this.options, id, this.#logger))
        } finally {
          this.#startingSandboxes--
          this.#refill()
        }
      },
      closed: () => {
        this.#sandboxes.delete(sandbox)
      }
    })
    this.#sandboxes.add(sandbox)
    return sandbox
  }

  /** The id of the container sandbox `sandboxId` (a result's `sandbox`) runs in now, if any (for tests and logs). */
  containerOf(sandboxId: string): string | undefined {
    for (const sandbox of this.#sandboxes) if (sandbox.id === sandboxId) return sandbox.containerId
    return undefined
  }

  /** Warm spares ready now (for tests and metrics). */
  get warmSpares(): number {
    return this.#spares.length
  }

  describe(): IsolationReport {
    const o = this.options
    const env = this.#manifest === undefined ? '' : `, Python ${this.#manifest.python}`
    return {
      driver: 'docker',
      boundary:
        `Docker container per slot (${o.image}${env}): network ${o.networkMode}, ` +
        `${o.readOnlyRoot ? 'read-only root' : 'writable root'}, uid ${o.user}, no capabilities, ` +
        `cgroup memory ${o.memoryMb} MiB / pids ${o.pidsLimit} / ${o.cpus} CPU`,
      properties: [
        `network: NetworkMode ${o.networkMode}${o.networkMode === 'none' ? ' (loopback only, no route out)' : ''}`,
        `filesystem: ${o.readOnlyRoot ? 'read-only image root' : 'writable image root'}, ${o.tmpfsMb} MiB tmpfs at /tmp (the jobs' work dir) and at /mnt, emptied after each job`,
        `privileges: uid ${o.user}, CapDrop ALL, no-new-privileges, Docker's default seccomp profile and the runner's filter on top (ptrace, process_vm_*, pidfd_getfd, io_uring, …: EPERM); the executor is the container's init, not dumpable`,
        `resources: memory = memory+swap = ${o.memoryMb} MiB, pids ${o.pidsLimit}, CPU quota ${o.cpus}, nofile ${o.nofile}`,
        'a fresh forked child per job inside the container' +
          (o.jobsPerContainer > 0 ? `, at most ${o.jobsPerContainer} jobs a container` : '') +
          (this.spares > 0
            ? `; a container is replaced by one of ${this.spares} warm spare container${this.spares === 1 ? '' : 's'} that never ran a job`
            : ''),
        'shared kernel: a kernel exploit escapes any container; use a VM-backed runtime (gVisor, Kata) for that threat'
      ]
    }
  }

  /** Closes every sandbox and spare, and removes any container still labelled with this runner. Idempotent. */
  async close(): Promise<void> {
    this.#closing ??= (async () => {
      // A sandbox's close waits for a container it is still booting; a spare still booting removes itself once up.
      await Promise.all([...this.#sandboxes].map(async (s) => await s.close()))
      await Promise.all([...this.#bootingSpares])
      await Promise.all(this.#spares.splice(0).map(async (c) => await c.remove()))
      await this.#engine.removeContainers().catch(() => 0)
    })()
    await this.#closing
  }

  #takeSpare(): DockerContainer | undefined {
    while (this.#spares.length > 0) {
      const spare = this.#spares.shift() as DockerContainer
      if (!spare.exited) return spare
      void spare.remove()
    }
    return undefined
  }

  /** Boots spares up to {@link spares}, only while no sandbox is starting (never slows a pool's start). */
  #refill(): void {
    while (
      this.#closing === undefined &&
      this.#startingSandboxes === 0 &&
      this.#spares.length + this.#bootingSpares.size < this.spares
    ) {
      const name = `spare-${this.#spareSeq++}`
      const booting: Promise<void> = DockerContainer.boot(this.#engine, this.options, name, this.#logger).then(
        async (spare) => {
          this.#bootingSpares.delete(booting)
          if (this.#closing !== undefined) {
            await spare.remove()
            return
          }
          this.#spares.push(spare)
          spare.onExit(() => {
            const i = this.#spares.indexOf(spare)
            if (i !== -1) this.#spares.splice(i, 1)
            void spare.remove()
            this.#refill()
          })
        },
        (err: unknown) => {
          // Not retried here: the next sandbox start tries again (and boots its own container).
          this.#bootingSpares.delete(booting)
          if (this.#closing === undefined)
            this.#logger?.warn({ sandbox: name, err: messageOf(err) }, 'spare container failed to boot')
        }
      )
      this.#bootingSpares.add(booting)
    }
  }
}
