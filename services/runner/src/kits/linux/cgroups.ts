/**
 * Memory and process limits for a whole sandbox through cgroups, where the host offers them
 * (v1 `memory` + `pids` hierarchies, or the v2 unified hierarchy with both controllers), so a
 * job's children and grandchildren together cannot take more than their sandbox's share.
 *
 * Each sandbox gets `sandfleet/<runner>@<owner>/<sandbox>` under each controller, where `<owner>`
 * names the runner's process ({@link ownerTag}). Its process joins the cgroup before it becomes
 * the sandbox: {@link SandboxCgroup.wrap} starts it through a tiny `sh` that writes its own pid
 * into `cgroup.procs` and then execs the real command, so every process of the sandbox is born
 * inside (nothing is moved after the fact).
 *
 * A runner killed outright (SIGKILL, OOM) cannot remove its cgroups; the next runner to open the
 * host's cgroups sweeps those whose owner is provably gone ({@link sweepStaleCgroups}).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type {
  ExecutorCommand,
  Job,
  JobWatch,
  RunOutcome,
  Sandbox,
  SandboxState,
  SandboxStats
} from '../../sandbox/contract.ts'

/** Limits of one sandbox. */
export interface CgroupLimits {
  /** Memory of all its processes together (and memory+swap where the host accounts swap). */
  memoryBytes: number
  /** Processes and threads alive at once; 0: no limit. */
  pids: number
}

const JOIN =
  'IFS=:; for f in $SANDFLEET_CGROUPS; do echo $$ > "$f" || exit 125; done; unset SANDFLEET_CGROUPS IFS; exec "$@"'

const safe = (name: string): string => name.replace(/[^A-Za-z0-9_.-]/g, '_')

/** The cgroups of one sandbox. */
export class SandboxCgroup {
  /** The directories made for it (one per v1 controller, one in v2). */
  readonly dirs: readonly string[]
  readonly #events: string

  constructor(dirs: string[], events: string) {
    this.dirs = dirs
    this.#events = events
  }

  /** OOM kills the kernel made in this cgroup so far. */
  oomKills(): number {
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(this.#events, 'utf8'))
      return m === null ? 0 : Number(m[1])
    } catch {
      return 0
    }
  }

  /** `command`, started inside this cgroup. */
  wrap(command: ExecutorCommand): ExecutorCommand {
    return {
      ...command,
      file: '/bin/sh',
      args: ['-c', JOIN, 'sandfleet-cgroup', command.file, ...command.args],
      env: { ...(command.env ?? {}), SANDFLEET_CGROUPS: this.dirs.map((d) => join(d, 'cgroup.procs')).join(':') }
    }
  }

  /** Removes the directories once their processes are gone (retries briefly). */
  async remove(): Promise<void> {
    for (const dir of this.dirs) {
      for (let i = 0; i < 50; i++) {
        try {
          rmdirSync(dir)
          break
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break
          await sleep(20)
        }
      }
    }
  }
}

/** `/proc/PID/stat`'s start time (clock ticks after boot), or undefined when no such process. */
function startTimeOf(pid: number | 'self'): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** The inode of this process's pid namespace (pids mean something only inside one). */
function pidNamespace(): string {
  return /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0'
}

/**
 * This process, named so that no other process of the host's life can share the name: its pid
 * namespace, pid and start time (`4026531836.1234.56789`). A runner's cgroups carry it.
 */
export function ownerTag(): string {
  return `${pidNamespace()}.${process.pid}.${startTimeOf('self') ?? '0'}`
}

/**
 * Whether the runner whose cgroup is named `name` is provably gone: its owner tag names a pid of
 * this pid namespace that no longer runs the process it named. A name without a tag (runners
 * before tags; their default id is `runner-<hostname>-<pid>`) is gone when its pid is that of
 * no process here and the hostname is this host's. Anything else may be a live runner's.
 */
function ownerGone(name: string, namespace: string): boolean {
  const tag = /@(\d+)\.(\d+)\.(\d+)$/.exec(name)
  if (tag !== null) return tag[1] === namespace && startTimeOf(Number(tag[2])) !== tag[3]
  const untagged = /^runner-(.+)-(\d+)$/.exec(name)
  return untagged !== null && untagged[1] === safe(hostname()) && startTimeOf(Number(untagged[2])) === undefined
}

/** Removes `dir` and the cgroups below it, deepest first; with `kill`, their processes first. */
async function removeTree(dir: string, kill: boolean): Promise<boolean> {
  let entries
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return true
  }
  for (const entry of entries) if (entry.isDirectory()) await removeTree(join(dir, entry.name), kill)
  if (kill) {
    try {
      for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')) {
        if (pid !== '')
          try {
            process.kill(Number(pid), 'SIGKILL')
          } catch {}
      }
    } catch {}
  }
  // a process just killed leaves its cgroup a moment later
  for (let tries = kill ? 50 : 1; ; tries--) {
    try {
      rmdirSync(dir)
      return true
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true
      if (tries === 1) return false
    }
    await sleep(10)
  }
}

/**
 * Removes from `top` (a controller's `sandfleet` directory) the cgroups of runners that are gone
 * ({@link ownerGone}), with whatever processes their sandboxes left (a tagged runner's only: its
 * death is proven); a live runner's cgroups, and any this cannot judge, stay. Answers the
 * directories removed.
 */
export async function sweepStaleCgroups(top: string): Promise<string[]> {
  const namespace = pidNamespace()
  const removed: string[] = []
  for (const entry of readdirSync(top, { withFileTypes: true })) {
    if (!entry.isDirectory() || !ownerGone(entry.name, namespace)) continue
    const dir = join(top, entry.name)
    if (await removeTree(dir, entry.name.includes('@'))) removed.push(dir)
  }
  return removed
}

/** The host's cgroups, as one runner uses them. */
export class CgroupHost {
  /** `1` (separate `memory` and `pids` hierarchies) or `2` (unified). */
  readonly version: 1 | 2
  readonly #parents: string[]

  /** Cgroups of runners found gone that {@link CgroupHost.open} removed. */
  readonly swept: readonly string[]

  private constructor(version: 1 | 2, parents: string[], swept: string[]) {
    this.version = version
    this.#parents = parents
    this.swept = swept
  }

  /** The runner's own directories (one per v1 controller, one in v2). */
  get dirs(): readonly string[] {
    return this.#parents
  }

  /**
   * The runner's cgroups under `root`, made now, after sweeping the cgroups that runners gone
   * from this host left; undefined when the host offers no writable memory and pids controllers
   * (the sandboxes then run with per-job rlimits only).
   */
  static async open(runnerId: string, root = '/sys/fs/cgroup'): Promise<CgroupHost | undefined> {
    const runner = `${safe(runnerId)}@${ownerTag()}`
    const sweep = async (tops: string[]): Promise<string[]> =>
      (await Promise.all(tops.map(async (t) => (existsSync(t) ? await sweepStaleCgroups(t) : [])))).flat()
    try {
      if (existsSync(join(root, 'memory', 'cgroup.procs')) && existsSync(join(root, 'pids', 'cgroup.procs'))) {
        const tops = ['memory', 'pids'].map((c) => join(root, c, 'sandfleet'))
        const swept = await sweep(tops)
        const parents = tops.map((top) => join(top, runner))
        for (const p of parents) mkdirSync(p, { recursive: true })
        return new CgroupHost(1, parents, swept)
      }
      const controllers = readFileSync(join(root, 'cgroup.controllers'), 'utf8')
      if (!/\bmemory\b/.test(controllers) || !/\bpids\b/.test(controllers)) return undefined
      const top = join(root, 'sandfleet')
      const swept = await sweep([top])
      mkdirSync(join(top, runner), { recursive: true })
      for (const dir of [root, top, join(top, runner)])
        writeFileSync(join(dir, 'cgroup.subtree_control'), '+memory +pids')
      return new CgroupHost(2, [join(top, runner)], swept)
    } catch {
      return undefined
    }
  }

  /** Makes the cgroups of one sandbox with `limits`. Throws when the host refuses. */
  create(sandboxId: string, limits: CgroupLimits): SandboxCgroup {
    const name = safe(sandboxId)
    const dirs = this.#parents.map((p) => join(p, name))
    for (const d of dirs) mkdirSync(d, { recursive: true })
    const bytes = String(limits.memoryBytes)
    const pids = limits.pids > 0 ? String(limits.pids) : 'max'
    if (this.version === 1) {
      const [memory, pid] = dirs
      writeFileSync(join(memory, 'memory.limit_in_bytes'), bytes)
      if (existsSync(join(memory, 'memory.memsw.limit_in_bytes')))
        writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), bytes)
      writeFileSync(join(pid, 'pids.max'), pids)
      return new SandboxCgroup(dirs, join(memory, 'memory.oom_control'))
    }
    const [dir] = dirs
    writeFileSync(join(dir, 'memory.max'), bytes)
    if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0')
    writeFileSync(join(dir, 'pids.max'), pids)
    return new SandboxCgroup(dirs, join(dir, 'memory.events'))
  }

  /** Removes the runner's own directories (its sandboxes' are removed as they close). */
  close(): void {
    for (const p of this.#parents) {
      try {
        rmdirSync(p)
      } catch {}
    }
  }
}

/**
 * A sandbox running inside its own cgroups: a job the kernel's OOM killer ended at the cgroup's
 * memory limit is answered `memory` (not `killed`), and the cgroups go when the sandbox closes.
 *
 * The OOM count is read when a job ends killed (not around every job: two file reads a job are a
 * sizeable share of the runner's event loop in Python batches) and compared with the count last read, so an
 * OOM kill of some earlier job's subprocess, which ended that job otherwise, may be what makes a
 * later kill count as `memory`; both are the code's doing. The job's end alone keeps the sandbox
 * (the executor swept what the job left); it is replaced when the executor asked for it, counted
 * as `oom` (the OOM killer took more than the job: the controller or a zygote).
 */
export class CgroupSandbox implements Sandbox {
  readonly #inner: Sandbox
  readonly #cgroup: SandboxCgroup
  /** OOM kills in the cgroup when last read. */
  #ooms: number

  constructor(inner: Sandbox, cgroup: SandboxCgroup) {
    this.#inner = inner
    this.#cgroup = cgroup
    this.#ooms = cgroup.oomKills()
  }

  get id(): string {
    return this.#inner.id
  }
  get state(): SandboxState {
    return this.#inner.state
  }
  /** The cgroup directories (tests, diagnostics). */
  get cgroupDirs(): readonly string[] {
    return this.#cgroup.dirs
  }

  async start(): Promise<void> {
    await this.#inner.start()
  }

  async execute(job: Job, watch?: JobWatch): Promise<RunOutcome> {
    const outcome = await this.#inner.execute(job, watch)
    if (outcome.status !== 'killed') return outcome
    const before = this.#ooms
    this.#ooms = this.#cgroup.oomKills()
    if (this.#ooms === before) return outcome
    const memory: RunOutcome = {
      ...outcome,
      status: 'memory',
      error: {
        type: 'MemoryError',
        message: 'the sandbox ran out of memory (its cgroup limit); the kernel killed the job'
      }
    }
    if (memory.retire === true) memory.retire_reason = 'oom'
    return memory
  }

  stats(): SandboxStats {
    return this.#inner.stats()
  }

  async close(): Promise<void> {
    await this.#inner.close()
    await this.#cgroup.remove()
  }
}
