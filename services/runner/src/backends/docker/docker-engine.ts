/**
 * The docker driver's side of the Docker engine: options with hardened defaults, the container
 * spec built from them, start-up checks with actionable messages, the image manifest, and the
 * runner-labelled containers (stale ones removed at start-up, all removed on close).
 *
 * @example
 * ```ts
 * const engine = new DockerEngine(resolveDockerOptions({ runnerId: 'r1' }))
 * await engine.check()             // clear error if the engine or the image is missing
 * await engine.removeContainers()  // stale containers of runner r1
 * const manifest = await engine.readManifest()
 * ```
 */
import Docker from 'dockerode'
import type { IsolationLevel, SandboxManifest } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import { SCRATCH_DIRS, envLines, sandboxEnv } from '../../kits/executor/sandbox-env.ts'
import { RunnerError, type RunnerErrorCode } from '../../errors.ts'
import { SYSCALL_TABLES, seccompFilter } from '../../kits/linux/seccomp.ts'
import { DEFAULT_MAX_JOBS_PER_SANDBOX, SANDBOX_HOSTNAME, type DriverEvents } from '../../sandbox/contract.ts'

/** Label every container of the driver carries; its value is the runner's id. */
export const RUNNER_LABEL = 'org.sandfleet.runner'
/** Label naming the sandbox (pool slot) a container serves. */
export const SANDBOX_LABEL = 'org.sandfleet.sandbox'
/** Where the image keeps its manifest (build-rootfs.sh and the Dockerfile write it). */
export const MANIFEST_PATH = '/opt/sandfleet/manifest.json'
/** Where the image keeps the executor (its main process). */
export const EXECUTOR_PATH = '/opt/sandfleet/executor.py'
/** Node's name of the CPU of an engine's `Arch` (Go's names), for the seccomp filter's system call table. */
const ENGINE_ARCH: Readonly<Record<string, string>> = { amd64: 'x64', arm64: 'arm64' }
/** The image built by sandbox-images/python (Dockerfile or build-image.sh). */
export const DEFAULT_IMAGE = 'sandfleet/python:1'

/** What the docker driver can be told; every field has a hardened default. */
export interface DockerDriverOptions {
  /** The runner's id: the value of the label on every container it makes. */
  runnerId: string
  /** Image to run (default {@link DEFAULT_IMAGE}). */
  image: string
  /** Docker engine socket (default /var/run/docker.sock, or DOCKER_HOST's unix socket). */
  socketPath: string
  /** Container memory limit in MiB; memory+swap is the same (no swap). */
  memoryMb: number
  /** Most processes and threads in a container. */
  pidsLimit: number
  /** CPU quota in cores (CpuQuota / CpuPeriod). */
  cpus: number
  /** Soft and hard RLIMIT_NOFILE of the container's processes. */
  nofile: number
  /** Size of each tmpfs, at /tmp (the jobs' work dir: each job's cwd is /tmp/job) and at /mnt, in MiB. */
  tmpfsMb: number
  /** uid:gid the executor runs as. */
  user: string
  /** Network mode; `none` keeps the sandbox offline. */
  networkMode: string
  /** Mount the image's root read-only. */
  readOnlyRoot: boolean
  /** Jobs a container runs before it is replaced (K); 0 for no limit. */
  jobsPerContainer: number
  /** How long a new container may take to answer `ready`. */
  readyTimeoutMs: number
  /**
   * A host executor.py to bind read-only over the image's (the runner's own copy, so that runner
   * and executor always speak the same protocol version); empty: the image's. Needs the engine
   * on this host.
   */
  executorPath: string
  /**
   * How the runner and the executor exchange frames. `socket` (the default with a local engine): a
   * Unix socket in a directory of the runner's bound into the container, which the executor
   * connects to once, before any job runs; the runner then closes the listener and removes the
   * socket's name, so nothing else in the container can reach it. Frames skip dockerd and the
   * shim (benchmarks/RESULTS.md, "Docker: the executor's frames over a Unix socket").
   * `attach`: the container's attached stdin/stdout, through the
   * engine (a remote engine, whose host cannot see the runner's directories, needs it).
   */
  channel: 'socket' | 'attach'
  /**
   * Isolation level of jobs that name none: with `reuse`, each tier's reuse process is made as soon as the tier is
   * warm.
   */
  isolation: IsolationLevel
  /** Where the executors' events go (the `reuse` level's, for the metrics). */
  events: DriverEvents
}

/** Where the executor finds the runner's channel socket inside a container (`channel: 'socket'`). */
export const CHANNEL_DIR = '/run/sandfleet'
/** The channel socket's name in {@link CHANNEL_DIR}. */
export const CHANNEL_SOCKET = 'executor.sock'

/** Options a caller may leave out; see {@link resolveDockerOptions}. */
export type DockerDriverInput = Partial<DockerDriverOptions> & { runnerId: string }

/** Applies the defaults (hardened, as the sandbox boundary needs) and freezes the result. */
export function resolveDockerOptions(input: DockerDriverInput): Readonly<DockerDriverOptions> {
  const host = process.env.DOCKER_HOST
  const socketPath =
    host !== undefined && host.startsWith('unix://') ? host.slice('unix://'.length) : '/var/run/docker.sock'
  return Object.freeze({
    image: DEFAULT_IMAGE,
    socketPath,
    memoryMb: 1024,
    pidsLimit: 128,
    cpus: 1,
    nofile: 1024,
    tmpfsMb: 64,
    user: '65534:65534',
    networkMode: 'none',
    readOnlyRoot: true,
    // The runner's default (the runner passes its own maxJobsPerSandbox). A new container costs ~1.8 s of CPU until
    // its tiers are warm: at 1,000 jobs a container and 500 calls/s, replacing them took ~0.9 of a core.
    jobsPerContainer: DEFAULT_MAX_JOBS_PER_SANDBOX,
    readyTimeoutMs: 30_000,
    executorPath: '',
    channel: host === undefined || host.startsWith('unix://') ? 'socket' : 'attach',
    isolation: 'fork',
    events: {},
    ...input
  })
}

/** Codes of the docker driver's start-up and engine faults (in the runner's registry). */
export type DockerErrorCode = Extract<RunnerErrorCode, `SF_ERR_RUNNER_DOCKER_${string}`>

/** A fault of the Docker engine or the image; its message says how to fix it. */
export class DockerDriverError extends RunnerError {
  declare readonly code: DockerErrorCode
  constructor(code: DockerErrorCode, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? {} : { cause })
    this.name = 'DockerDriverError'
  }
}

/** The image's manifest: Python and package versions of the sandbox environment (the protocol's shape). */
export type ImageManifest = SandboxManifest

/** One connection to the Docker engine plus what the driver does with it. */
export class DockerEngine {
  /** The dockerode client (shared by every sandbox of the driver). */
  readonly docker: Docker
  readonly #opts: Readonly<DockerDriverOptions>
  /** The seccomp filter the executor installs over Docker's (base64), for the engine's CPU; set by {@link check}. */
  #seccomp: string | undefined

  constructor(opts: Readonly<DockerDriverOptions>) {
    this.#opts = opts
    this.#seccomp = seccompFilter(SYSCALL_TABLES[process.arch])?.toString('base64')
    this.docker = new Docker({ socketPath: opts.socketPath })
  }

  /** Rejects with a {@link DockerDriverError} naming the fix when the engine or the image is missing. */
  async check(): Promise<void> {
    try {
      await this.docker.ping()
    } catch (err) {
      const denied = (err as { code?: string }).code === 'EACCES'
      throw new DockerDriverError(
        'SF_ERR_RUNNER_DOCKER_ENGINE',
        `the Docker engine does not answer on ${this.#opts.socketPath} (${messageOf(err)}): ` +
          (denied
            ? 'this user may not use its socket; run the runner as root or as a member of the docker group'
            : 'start it (`dockerd &` or `systemctl start docker`) and check with `docker info`; another socket: DOCKER_HOST=unix:///path'),
        err
      )
    }
    // A remote engine may run on another CPU than the runner's: the filter is the engine's.
    const arch = await this.docker.version().then(
      (v) => ENGINE_ARCH[v.Arch],
      () => undefined
    )
    if (arch !== undefined) this.#seccomp = seccompFilter(SYSCALL_TABLES[arch])?.toString('base64')
    try {
      await this.docker.getImage(this.#opts.image).inspect()
    } catch (err) {
      const image = this.#opts.image
      const env = image === DEFAULT_IMAGE ? '' : `SANDFLEET_DOCKER_IMAGE=${image} `
      throw new DockerDriverError(
        'SF_ERR_RUNNER_DOCKER_IMAGE',
        `the sandbox image ${image} is not in the Docker engine: build it with ` +
          `\`${env}bash sandbox-images/python/build-image.sh\` (offline, debootstrap) or ` +
          `\`docker build -t ${image} sandbox-images/python\` (see sandbox-images/python/README.md)`,
        err
      )
    }
  }

  /** Reads {@link MANIFEST_PATH} out of the image (through a created, never started, container). */
  async readManifest(): Promise<ImageManifest> {
    const info = await this.docker.getImage(this.#opts.image).inspect()
    const container = await this.docker.createContainer({
      Image: this.#opts.image,
      Labels: { [RUNNER_LABEL]: this.#opts.runnerId },
      HostConfig: { NetworkMode: 'none' }
    })
    try {
      const archive = await container.getArchive({ path: MANIFEST_PATH })
      const tar = await readAll(archive)
      const manifest = JSON.parse(firstTarEntry(tar)) as ImageManifest
      return { ...manifest, image_id: info.Id, image_ref: this.#opts.image }
    } catch (err) {
      throw new DockerDriverError(
        'SF_ERR_RUNNER_DOCKER_IMAGE',
        `the image ${this.#opts.image} has no readable ${MANIFEST_PATH}: rebuild it with sandbox-images/python/build-image.sh`,
        err
      )
    } finally {
      await container.remove({ force: true }).catch(() => {})
    }
  }

  /** Ids of the containers labelled with this runner's id (running or not). */
  async listContainers(): Promise<string[]> {
    const list = await this.docker.listContainers({
      all: true,
      filters: { label: [`${RUNNER_LABEL}=${this.#opts.runnerId}`] }
    })
    return list.map((c) => c.Id)
  }

  /**
   * Force-removes every container of this runner (or those of `ids`); returns how many it
   * removed. For the whole runner it lists again until none is left (a removal racing another,
   * or a container still being created, is answered before it is gone), for up to ~5 s.
   */
  async removeContainers(ids?: readonly string[]): Promise<number> {
    const removeAll = async (list: readonly string[]): Promise<void> => {
      await Promise.all(
        list.map(
          async (id) =>
            await this.docker
              .getContainer(id)
              .remove({ force: true })
              .catch(() => {})
        )
      )
    }
    if (ids !== undefined) {
      await removeAll(ids)
      return ids.length
    }
    let list = await this.listContainers()
    const removed = new Set(list)
    for (let round = 0; list.length > 0 && round < 50; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 100))
      await removeAll(list)
      list = await this.listContainers()
      for (const id of list) removed.add(id)
    }
    return removed.size
  }

  /**
   * The create options of one sandbox container: the executor as main process, hardened. With
   * `channelDir` (a host directory holding the runner's listening {@link CHANNEL_SOCKET}), the
   * executor speaks over that socket instead of stdin/stdout.
   */
  containerSpec(sandboxId: string, channelDir?: string): Docker.ContainerCreateOptions {
    const o = this.#opts
    const binds = [
      ...(o.executorPath === '' ? [] : [`${o.executorPath}:${EXECUTOR_PATH}:ro`]),
      ...(channelDir === undefined ? [] : [`${channelDir}:${CHANNEL_DIR}:ro`])
    ]
    const memoryBytes = o.memoryMb * 1024 * 1024
    // Docker copies the image directory's mode into a tmpfs mounted over it: /tmp is 1777 in both images, /mnt is
    // root's 0755, so the tmpfs at /mnt is owned by the executor's user (when it is given by number) for jobs to write
    // there.
    const tmpfs = `rw,nosuid,nodev,size=${o.tmpfsMb}m,mode=1777`
    const [uid, gid = uid] = o.user.split(':')
    const owned = /^\d+$/.test(uid) && /^\d+$/.test(gid) ? `,uid=${uid},gid=${gid}` : ''
    return {
      Image: o.image,
      User: o.user,
      Hostname: SANDBOX_HOSTNAME,
      WorkingDir: '/tmp',
      // As the process driver: isolated mode (no PYTHON* variables, no script dir on sys.path).
      Cmd: ['python3', '-I', EXECUTOR_PATH],
      Labels: { [RUNNER_LABEL]: o.runnerId, [SANDBOX_LABEL]: sandboxId },
      AttachStdin: channelDir === undefined,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: channelDir === undefined,
      StdinOnce: false,
      Tty: false,
      NetworkDisabled: o.networkMode === 'none',
      // Each job's cwd is /tmp/job; whatever a job leaves in /tmp, /mnt or /dev/shm is removed after it.
      Env: [
        'PYTHONDONTWRITEBYTECODE=1',
        'PYTHONUNBUFFERED=1',
        'LANG=C.UTF-8',
        'HOME=/tmp',
        ...envLines(
          sandboxEnv({
            workDir: '/tmp/job',
            scratch: SCRATCH_DIRS.join(':'),
            isolation: o.isolation,
            channel: channelDir === undefined ? undefined : `${CHANNEL_DIR}/${CHANNEL_SOCKET}`,
            // The process backend's seccomp filter (ptrace, process_vm_*, pidfd_getfd, keyrings, bpf, io_uring, …:
            // EPERM), which the executor adds on top of Docker's default profile before any job runs.
            seccomp: this.#seccomp
          })
        )
      ],
      HostConfig: {
        // The executor is the container's init: Docker's (docker-init) would run as the job's uid, dumpable, for the
        // container's whole life, and a job could ptrace it or write its /proc/1/mem (a foothold into every later
        // job). The executor is not dumpable and reaps what jobs leave behind.
        Init: false,
        NetworkMode: o.networkMode,
        ReadonlyRootfs: o.readOnlyRoot,
        Tmpfs: { '/tmp': tmpfs, '/mnt': tmpfs + owned },
        ...(binds.length === 0 ? {} : { Binds: binds }),
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Memory: memoryBytes,
        MemorySwap: memoryBytes,
        PidsLimit: o.pidsLimit,
        CpuPeriod: 100_000,
        CpuQuota: Math.round(o.cpus * 100_000),
        Ulimits: [{ Name: 'nofile', Soft: o.nofile, Hard: o.nofile }],
        IpcMode: 'private',
        AutoRemove: false
      }
    }
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer))
  return Buffer.concat(chunks)
}

/** The content of the first regular file of a tar archive (a 512-byte header, then the data). */
function firstTarEntry(tar: Buffer): string {
  const size = parseInt(tar.subarray(124, 136).toString('ascii').replace(/\0.*$/, '').trim(), 8)
  if (!Number.isFinite(size)) throw new Error('not a tar archive')
  return tar.subarray(512, 512 + size).toString('utf8')
}
