/**
 * A small scripted Driver for the pool, queue and runner tests: the job's code is a command.
 * `echo <text>` → ok with stdout; `sleep <ms>` → ok after ms; `timeout`, `memory`, `killed` → that
 * status, the sandbox kept, 0.25 ms of CPU; `retire <reason>` → timeout + retire with that reason;
 * `reject` → execute rejects (a fleet fault); `hang` → no answer until the sandbox is closed
 * (then it rejects); `waits <ms>` → tells the job's watch it waits to start, then ok after ms. Start failures are
 * scripted with `failStarts`; a sandbox found tampered with (the job does not run) with `tamperNext`.
 */
import type { ResolvedExecRequest } from '@sandfleet/protocol'
import type {
  Driver,
  IsolationReport,
  Job,
  JobWatch,
  PooledJob,
  RunOutcome,
  Sandbox,
  SandboxState,
  SandboxStats
} from '../../src/sandbox/contract.ts'
import type { RetireReason } from '../../src/sandbox/retire-reasons.ts'

/** Options of {@link ScriptedDriver}. */
export interface ScriptedOptions {
  /** How many sandbox starts fail before they succeed (Infinity: always). */
  failStarts?: number
  /** Milliseconds a start takes. */
  startMs?: number
  /** The driver's {@link Driver.maxPoolSize}. */
  maxPoolSize?: number
  /** The driver's {@link Driver.stopMs}. */
  stopMs?: number
}

/** The scripted driver; it records what happened for assertions. */
export class ScriptedDriver implements Driver {
  readonly name = 'unsafe' as const
  readonly languages = ['python'] as const
  failStarts: number
  /** Milliseconds a start takes (may change between starts). */
  startMs: number
  /** How many of the next executes report the sandbox tampered with (the job does not run). */
  tamperNext = 0
  readonly maxPoolSize: number | undefined
  readonly stopMs: number | undefined
  starts = 0
  startFailures = 0
  readonly sandboxes: ScriptedSandbox[] = []
  closed = false

  constructor(options: ScriptedOptions = {}) {
    this.failStarts = options.failStarts ?? 0
    this.startMs = options.startMs ?? 0
    this.maxPoolSize = options.maxPoolSize
    this.stopMs = options.stopMs
  }

  async check(): Promise<void> {}
  createSandbox(id: string): Sandbox {
    const sandbox = new ScriptedSandbox(id, this)
    this.sandboxes.push(sandbox)
    return sandbox
  }

  describe(): IsolationReport {
    return { driver: 'unsafe', boundary: 'scripted test driver', properties: [] }
  }

  async close(): Promise<void> {
    this.closed = true
  }

  /** Sandboxes not closed. */
  get open(): number {
    return this.sandboxes.filter((s) => s.state !== 'closed').length
  }
}

const outcome = (status: RunOutcome['status'], stdout = ''): RunOutcome => ({
  status,
  stdout,
  stderr: '',
  exit_code: status === 'ok' ? 0 : null,
  duration_ms: 1,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {}
})

/** One scripted sandbox. */
export class ScriptedSandbox implements Sandbox {
  state: SandboxState = 'starting'
  jobs = 0
  readonly ran: string[] = []
  #wake: (() => void) | undefined
  constructor(
    readonly id: string,
    readonly driver: ScriptedDriver
  ) {}

  async start(): Promise<void> {
    this.driver.starts++
    if (this.driver.startMs > 0) await new Promise((resolve) => setTimeout(resolve, this.driver.startMs))
    if (this.driver.startFailures < this.driver.failStarts) {
      this.driver.startFailures++
      throw new Error('scripted start failure')
    }
    this.state = 'ready'
  }

  async execute(job: Job, watch?: JobWatch): Promise<RunOutcome> {
    if (this.state !== 'ready') throw new Error(`sandbox ${this.id} is ${this.state}`)
    if (this.driver.tamperNext > 0) {
      this.driver.tamperNext--
      throw Object.assign(new Error("scripted: an earlier job changed this sandbox's processes"), {
        code: 'SF_ERR_RUNNER_SANDBOX_TAMPERED'
      })
    }
    this.state = 'busy'
    this.jobs++
    const code = job.request.code
    this.ran.push(code)
    try {
      const [cmd, arg = ''] = code.split(' ', 2)
      if (cmd === 'echo') return outcome('ok', `${code.slice(5)}\n`)
      if (cmd === 'sleep') {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Number(arg))
          this.#wake = () => {
            clearTimeout(t)
            resolve()
          }
        })
        if ((this.state as SandboxState) === 'closed') throw new Error('sandbox closed while running')
        return outcome('ok', `slept ${arg}\n`)
      }
      if (cmd === 'hang') {
        await new Promise<void>((resolve) => {
          this.#wake = resolve
        })
        throw new Error('sandbox closed while it hung')
      }
      if (cmd === 'waits') {
        watch?.waiting()
        await new Promise((resolve) => setTimeout(resolve, Number(arg)))
        return outcome('ok', `waited ${arg}\n`)
      }
      if (cmd === 'timeout' || cmd === 'memory' || cmd === 'killed') return { ...outcome(cmd), cpu_ms: 0.25 }
      if (cmd === 'retire') return { ...outcome('timeout'), retire: true, retire_reason: arg as RetireReason }
      // as an executor whose tier warmed for `arg` ms first: prints the wait left to the job by its startBy
      if (cmd === 'warmed') return { ...outcome('ok', `${String(waitLeft(job))}\n`), waited_ms: Number(arg) }
      if (cmd === 'still-warming')
        return {
          ...outcome('queue_timeout'),
          error: { type: 'TierWarming', message: 'still warming' },
          waited_ms: waitLeft(job)
        }
      if (cmd === 'reject') throw new Error('scripted execute failure')
      return outcome('error')
    } finally {
      if (this.state === 'busy') this.state = 'ready'
    }
  }

  stats(): SandboxStats {
    return { jobs: this.jobs }
  }

  async close(): Promise<void> {
    this.state = 'closed'
    this.#wake?.()
  }
}

/** What is left of a job's wait when its sandbox takes it, as an executor is told (`wait_ms`). */
function waitLeft(job: Job): number | undefined {
  return job.startBy === undefined ? undefined : Math.max(0, Math.round(job.startBy - performance.now()))
}

/** What {@link job} makes differ from its defaults. */
export interface JobOptions {
  /** How long it may wait for a sandbox from now (its `startBy`); default 10 s. */
  waitMs?: number
  /** Its `timeout_ms`; default 1 s. */
  timeoutMs?: number
  /** Its `request_id`, echoed in its result. */
  requestId?: string
}

/** A job for `code` as a pool takes it, defaults applied. */
export function job(code: string, options: JobOptions = {}): PooledJob {
  const request: ResolvedExecRequest = {
    language: 'python',
    code,
    stdin: '',
    timeout_ms: options.timeoutMs ?? 1000,
    memory_mb: 256,
    files: {},
    fetch_files: [],
    isolation: 'fork'
  }
  if (options.requestId !== undefined) request.request_id = options.requestId
  return { request, maxOutputBytes: 65536, startBy: performance.now() + (options.waitMs ?? 10_000) }
}
