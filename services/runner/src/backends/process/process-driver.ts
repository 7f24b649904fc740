/**
 * The `process` driver: executor.py under bubblewrap (all namespaces unshared, so no network;
 * read-only binds of the host's /usr and the /etc bits Python needs; tmpfs /tmp; uid/gid 65534;
 * no capabilities; dies with the runner). As root, bubblewrap itself runs as host uid 65534
 * through setpriv, so an escape from the namespaces lands as nobody. Where the host offers cgroups,
 * each sandbox also has its own memory and pids limits (`cgroups.ts`).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import type { Language, SandboxManifest } from '@sandfleet/protocol'
import {
  SANDBOX_HOSTNAME,
  type Driver,
  type DriverOptions,
  type ExecutorCommand,
  type IsolationReport,
  type Sandbox
} from '../../sandbox/contract.ts'
import { CgroupHost, CgroupSandbox } from '../../kits/linux/cgroups.ts'
import { EXECUTOR_RETIRES, EXECUTOR_SOFT_STOP_MS } from '../../kits/executor/executor-channel.ts'
import { SCRATCH_DIRS, sandboxEnv, type SandboxEnvValues } from '../../kits/executor/sandbox-env.ts'
import type { SandboxLife } from '../../sandbox/retire-reasons.ts'
import type { ProcessSettings } from './process-config.ts'
import { ProcessSandbox } from './process-sandbox.ts'
import { SHIPPED_EXECUTOR, SHIPPED_MANIFEST_PROBE, SHIPPED_SESSION_HOST } from '../../kits/executor/python-image.ts'
import { probeManifest } from '../../kits/executor/manifest-probe.ts'
import { SYSCALL_TABLES, seccompFilter } from '../../kits/linux/seccomp.ts'

/**
 * PATH inside a process sandbox (only the host's /usr is bound in): how its `python3` resolves, never a user's pyenv or
 * venv.
 */
export const SANDBOX_PATH = '/usr/local/bin:/usr/bin:/bin'

const ETC = [
  '/etc/alternatives',
  '/etc/fonts',
  '/etc/ld.so.cache',
  '/etc/localtime',
  '/etc/matplotlibrc',
  '/etc/python3',
  '/etc/ssl'
]

/** Python under bubblewrap on this host. */
export class ProcessDriver implements Driver {
  readonly name: Driver['name'] = 'process'
  readonly languages: readonly Language[] = ['python']
  /** The executor's own stop: SIGTERM at `timeout_ms`, SIGKILL `EXECUTOR_SOFT_STOP_MS` later. */
  readonly stopMs = EXECUTOR_SOFT_STOP_MS
  /** The executor judges a whole program in one job (its `judge` frame). */
  readonly judges = true
  private readonly executor: string
  /** The runner's cgroups, when the host offers them (opened by {@link check}). */
  private cgroups: CgroupHost | undefined
  /** The Python programs handed to the sandboxes, read once (see {@link ProcessDriver.#program}). */
  readonly #programs = new Map<string, Buffer>()
  /** bubblewrap can forbid user namespaces inside the sandbox (`--disable-userns`, 0.8+; set by {@link check}). */
  private disableUserns = false
  /** The sandboxes' seccomp filter (seccomp.ts); undefined on a CPU it has no table for. */
  private readonly seccomp = seccompFilter(SYSCALL_TABLES[process.arch])
  /** The session host's: it makes each session's namespaces (unshare, and mount for its /proc). */
  private readonly sessionSeccomp = seccompFilter(SYSCALL_TABLES[process.arch], ['unshare', 'mount'])
  /** What the sandboxes' Python is and can import (read by {@link check} in a sandbox). */
  #manifest: SandboxManifest | undefined

  constructor(private readonly options: DriverOptions<ProcessSettings>) {
    this.executor = options.config.executorPath !== '' ? options.config.executorPath : SHIPPED_EXECUTOR
  }

  /**
   * Fails with how to install bubblewrap or python3 when either is missing; reads the sandboxes' Python environment
   * (manifest.py in a sandbox of this kind) for /v1/info.
   */
  async check(): Promise<void> {
    for (const bin of ['bwrap', this.options.config.pythonPath]) {
      // looked up on the sandbox's own PATH: the interpreter checked is the one the sandbox runs
      try {
        execFileSync(bin, ['--version'], { stdio: 'ignore', env: { PATH: SANDBOX_PATH } })
      } catch {
        throw new Error(
          `${bin} is not runnable; install it (Debian: apt-get install bubblewrap python3 python3-numpy python3-sympy python3-scipy)`
        )
      }
    }
    if (!existsSync(this.executor)) throw new Error(`executor not found at ${this.executor}`)
    this.#program(this.executor)
    try {
      this.disableUserns = execFileSync('bwrap', ['--help'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore']
      }).includes('--disable-userns')
    } catch {}
    const manifest = this.#readManifest()
    this.cgroups = await CgroupHost.open(this.options.config.id)
    if (this.cgroups === undefined)
      this.options.logger.warn(
        { driver: 'process' },
        'no writable memory and pids cgroups on this host: sandboxes are limited by per-job rlimits only'
      )
    else if (this.cgroups.swept.length > 0)
      this.options.logger.warn(
        { driver: 'process', stale: this.cgroups.swept.length },
        'removed the cgroups of runners gone from this host'
      )
    this.#manifest = await manifest
  }

  /** manifest.py in a sandbox like the executor's; undefined, with a warning, when it does not answer. */
  async #readManifest(): Promise<SandboxManifest | undefined> {
    try {
      const command = this.bubblewrap(
        { path: SHIPPED_MANIFEST_PROBE, at: '/opt/sandfleet/manifest.py' },
        this.disableUserns ? ['--unshare-user', '--disable-userns'] : [],
        [],
        {},
        this.seccomp
      )
      return await probeManifest(command, { image: 'host', build: 'host', executor: '/opt/sandfleet/executor.py' })
    } catch (err) {
      this.options.logger.warn({ driver: 'process', err: (err as Error).message }, 'no manifest for /v1/info')
      return undefined
    }
  }

  /** The sandboxes' Python version and packages, read by {@link check}. */
  manifest(): SandboxManifest | undefined {
    return this.#manifest
  }

  /** Every job end is survived; the executor's reasons, and its cgroup running out of memory where it has one. */
  get life(): SandboxLife {
    return {
      noun: 'sandbox',
      keeps: ['timeout', 'memory', 'killed'],
      retires: this.cgroups === undefined ? EXECUTOR_RETIRES : [...EXECUTOR_RETIRES, 'oom']
    }
  }

  /** The bubblewrap command of one sandbox. */
  command(): ExecutorCommand {
    // /tmp, /mnt, /dev/shm (POSIX shared memory) and /dev/mqueue (POSIX message queues) are this sandbox's own: emptied
    // after each job; the rest of its file system is read-only (see bubblewrap). RLIMIT_NPROC counts uid 65534 in this
    // sandbox's user namespace only. No user namespace inside it: a job would get every capability in one of its own
    // (mounts, netfilter in a network namespace: kernel attack surface). (The session host makes namespaces per
    // session, so it keeps them.)
    const noUserns = this.disableUserns ? ['--unshare-user', '--disable-userns'] : []
    // The executor is the sandbox's pid 1 (--as-pid-1): bubblewrap's own reaper there ran as the job's uid, dumpable,
    // for the sandbox's whole life, and a job could open its /proc/1/mem for writing (ptrace is denied by the filter,
    // /proc/PID/mem is not): a foothold into every later job. The executor is not dumpable and reaps what jobs leave.
    return this.bubblewrap(
      { path: this.executor, at: '/opt/sandfleet/executor.py' },
      [...noUserns, '--as-pid-1'],
      [],
      { scratch: SCRATCH_DIRS.join(':'), maxProcs: 64, isolation: this.options.config.isolation },
      this.seccomp
    )
  }

  /**
   * The session host in one bubblewrap sandbox of the same kind, its socket directory bound in;
   * each session then gets namespaces of its own inside it (session_host.py), and a private tmpfs on
   * /home/user (a sandbox's home).
   */
  sessionHost(socketDir: string): ExecutorCommand {
    return this.bubblewrap(
      { path: SHIPPED_SESSION_HOST, at: '/opt/sandfleet/session_host.py' },
      ['--bind', socketDir, '/run/sandfleet-sessions', '--dir', '/home/user'],
      ['/run/sandfleet-sessions'],
      { sessionNamespaces: 1 },
      this.sessionSeccomp
    )
  }

  /**
   * The bytes of the Python program at `path`, read by the runner (once) and handed to bubblewrap
   * on a pipe (`--ro-bind-data`): bubblewrap runs as uid 65534 when the runner is root, and a
   * checkout under a directory that uid cannot enter (a root home of mode 0700) is still served.
   */
  #program(path: string): Buffer {
    let bytes = this.#programs.get(path)
    if (bytes === undefined) {
      bytes = readFileSync(path)
      this.#programs.set(path, bytes)
    }
    return bytes
  }

  /**
   * bubblewrap around `python -I PROGRAM ARGS`, the program handed in (read-only at `program.at`),
   * `binds` added to the common read-only root, `extraEnv` to its environment and the `seccomp`
   * filter (handed to bubblewrap on fd 3) on all of it.
   */
  private bubblewrap(
    program: { path: string; at: string },
    binds: string[],
    args: string[],
    sandbox: SandboxEnvValues,
    seccomp: Buffer | undefined
  ): ExecutorCommand {
    const fds = [...(seccomp === undefined ? [] : [seccomp]), this.#program(program.path)]
    const bw = [
      ...(seccomp === undefined ? [] : ['--seccomp', '3']),
      '--unshare-all',
      // Its own UTS namespace's name: not the host's (in a fleet's runner container, the container's id).
      '--hostname',
      SANDBOX_HOSTNAME,
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--uid',
      '65534',
      '--gid',
      '65534',
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/lib',
      '/lib',
      '--symlink',
      'usr/lib64',
      '/lib64',
      '--symlink',
      'usr/bin',
      '/bin',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/dev/shm',
      '--mqueue',
      '/dev/mqueue',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/mnt',
      '--perms',
      '0444',
      '--ro-bind-data',
      String(2 + fds.length),
      program.at,
      ...binds,
      '--chdir',
      '/tmp'
    ]
    for (const p of ETC) if (existsSync(p)) bw.push('--ro-bind', p, p)
    // Last, once every mount point is made: the root and /dev read-only (bubblewrap makes both tmpfs, which a job could
    // write to for the next job to find); their tmpfs mounts (/tmp, /mnt, /dev/shm) stay writable.
    bw.push('--remount-ro', '/dev', '--remount-ro', '/')
    bw.push('--', this.options.config.pythonPath, '-I', program.at, ...args)
    const env = {
      PATH: SANDBOX_PATH,
      LANG: 'C.UTF-8',
      HOME: '/tmp',
      ...sandboxEnv({ workDir: '/tmp/work', ...sandbox })
    }
    if (process.getuid?.() === 0)
      return {
        file: 'setpriv',
        args: ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'bwrap', ...bw],
        env,
        fds
      }
    return { file: 'bwrap', args: bw, env, fds }
  }

  /** A bubblewrap sandbox, not started; in its own memory and pids cgroups when the host has them. */
  createSandbox(id: string): Sandbox {
    const { config } = this.options
    const events = this.options.events
    if (this.cgroups === undefined) return new ProcessSandbox(id, this.command(), events)
    const cgroup = this.cgroups.create(id, {
      memoryBytes: this.sandboxMemoryMb() * 1024 * 1024,
      pids: config.sandboxPids
    })
    return new CgroupSandbox(new ProcessSandbox(id, cgroup.wrap(this.command()), events), cgroup)
  }

  /** Memory of one whole sandbox: `sandboxMemoryMb`, or the largest job's plus room for the executor. */
  private sandboxMemoryMb(): number {
    const { sandboxMemoryMb, maxMemoryMb } = this.options.config
    return sandboxMemoryMb > 0 ? sandboxMemoryMb : maxMemoryMb + 512
  }

  /** What this driver protects against. */
  describe(): IsolationReport {
    return {
      driver: 'process',
      boundary: 'bubblewrap namespaces (no network, read-only root, uid 65534, no capabilities)',
      properties: [
        'no network (own network namespace)',
        'read-only host /usr, tmpfs /tmp and /mnt (emptied after each job)',
        `own pid namespace, killed with the runner; own hostname (${SANDBOX_HOSTNAME})`,
        ...(this.disableUserns ? ['no user namespaces inside the sandbox'] : []),
        this.seccomp === undefined
          ? 'no seccomp filter (no system call table for this CPU)'
          : 'no-new-privileges and a seccomp filter: EPERM for the calls code has no use for (keyrings, bpf, perf events, userfaultfd, io_uring, mounts, namespaces, ptrace, modules), other ABIs killed',
        this.cgroups === undefined
          ? 'no cgroup limits on this host: memory and processes are limited per job by rlimits only'
          : `cgroup v${this.cgroups.version} limits per sandbox: memory ${this.sandboxMemoryMb()} MiB, ${this.options.config.sandboxPids > 0 ? `${this.options.config.sandboxPids} processes` : 'no process limit'}`
      ]
    }
  }

  /** Removes the runner's cgroup directories. */
  async close(): Promise<void> {
    this.cgroups?.close()
  }
}
