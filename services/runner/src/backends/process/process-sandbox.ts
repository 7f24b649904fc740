/** A sandbox that is one executor.py process, spawned by a command; shared by the process and unsafe drivers. */
import type { ChildProcess } from 'node:child_process'
import type {
  DriverEvents,
  ExecutorCommand,
  Job,
  JobWatch,
  RunOutcome,
  Sandbox,
  SandboxState,
  SandboxStats
} from '../../sandbox/contract.ts'
import { ExecutorChannel } from '../../kits/executor/executor-channel.ts'
import { killGroup, spawnCommand } from '../../kits/executor/spawn.ts'
import { RunnerError } from '../../errors.ts'

/** One executor process behind an {@link ExecutorChannel}. */
export class ProcessSandbox implements Sandbox {
  private current: SandboxState = 'starting'
  private child: ChildProcess | undefined
  private channel: ExecutorChannel | undefined
  private jobs = 0

  constructor(
    readonly id: string,
    private readonly command: ExecutorCommand,
    private readonly events: DriverEvents = {},
    private readonly readyTimeoutMs = 30_000
  ) {}

  /** The lifecycle state. */
  get state(): SandboxState {
    return this.current
  }

  /** Pid of the process leading the sandbox's process group (after {@link start} began). */
  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Spawns the executor and waits for its `ready` frame. */
  async start(): Promise<void> {
    // Its own process group: killing the group also reaches a sandbox process that is still
    // being set up (bubblewrap sets --die-with-parent only once it runs), so none outlives close().
    const child = spawnCommand(this.command, 'ignore')
    this.child = child
    child.on('error', () => {
      this.channel?.close()
    })
    child.on('exit', () => {
      this.channel?.close()
    })
    this.channel = new ExecutorChannel(child.stdout!, child.stdin!, { events: this.events })
    try {
      await this.channel.ready(this.readyTimeoutMs)
      this.current = 'ready'
    } catch (err) {
      await this.close()
      throw new Error(`sandbox ${this.id} did not start: ${(err as Error).message}`)
    }
  }

  /** Runs one job through the executor. */
  async execute(job: Job, watch?: JobWatch): Promise<RunOutcome> {
    if (this.channel === undefined || this.current !== 'ready') throw new Error(`sandbox ${this.id} is ${this.current}`)
    this.current = 'busy'
    try {
      const outcome = await this.channel.run(job, watch)
      this.jobs++
      // The executor found its processes changed by an earlier job (reniced, rlimits lowered) and did not run this one.
      if (outcome.status === 'infra_error' && outcome.error?.type === 'SandboxTampered')
        throw new RunnerError('SF_ERR_RUNNER_SANDBOX_TAMPERED', outcome.error.message)
      return outcome
    } finally {
      if (this.current === 'busy') this.current = this.channel.closed ? 'closing' : 'ready'
    }
  }

  /** Jobs run so far. */
  stats(): SandboxStats {
    return { jobs: this.jobs }
  }

  /** Kills the executor and everything in it. Idempotent. */
  async close(): Promise<void> {
    if (this.current === 'closed') return
    this.current = 'closed'
    this.channel?.close()
    const child = this.child
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) =>
        child.once('exit', () => {
          resolve()
        })
      )
      killGroup(child)
      await exited
    }
  }
}
