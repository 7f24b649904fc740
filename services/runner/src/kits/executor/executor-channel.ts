/**
 * The runner's side of the executor protocol (docs/executor-protocol.md): NDJSON frames over the
 * executor's stdin/stdout. The only TypeScript implementation, shared by the process and docker
 * drivers and by the sessions (a session's socket speaks the same `exec` and `result` frames).
 */
import type { Readable, Writable } from 'node:stream'
import { GRACES, type ResolvedExecRequest } from '@sandfleet/protocol'
import type { DriverEvents, Job, JobWatch, JudgeSink, RunOutcome } from '../../sandbox/contract.ts'
import { failedOutcome } from '../../sandbox/failed-outcome.ts'
import { retireReasonOf, type RetireReason } from '../../sandbox/retire-reasons.ts'
import type { RunnerErrorCode } from '../../errors.ts'
import { compiledOf, judgeAckFrame, judgeFrame, judgeStopFrame, testedOf } from './judge-frames.ts'

/**
 * The executor's soft stop: SIGTERM at `timeout_ms`, SIGKILL this much later. The drivers hand it
 * to executor.py and session_host.py as `SANDFLEET_SOFT_STOP_MS`, and declare it as their
 * `stopMs`, which the runner's hard deadline adds.
 */
export const EXECUTOR_SOFT_STOP_MS = GRACES.softStopMs

/**
 * The reasons an executor's sandbox retires with: what the executor could not undo after a job (a process that survived
 * SIGKILL, what it left, a zygote, its own limits changed), or its own exit mid-job (this channel's).
 */
export const EXECUTOR_RETIRES: readonly RetireReason[] = Object.freeze([
  'unswept',
  'cleanup',
  'zygote',
  'tampered',
  'exited'
] as const)

/** The executor's `ready` frame. */
export interface ReadyFrame {
  op: 'ready'
  protocol: number
  pid: number
  python: string
  /** Zygote tiers (name → modules it preloads); tiers other than `bare` may still be warming (see `tier` frames). */
  tiers: Record<string, string[]>
  packages: Record<string, string>
  /** The isolation levels it offers (an older executor: fork only). */
  isolation?: string[]
}

/**
 * The `exec` frame: one job, every field present and resolved (the request's defaults applied by
 * `resolveExecRequest`, the runner's by its settings). The executor and the session host parse it
 * once into their frozen `ExecJob` (sandbox-images/python/sandfleet_sandbox/frames.py) and apply no
 * default of their own: a frame without a field, or with one of another type, is refused with an
 * `infra_error` result of type `BadFrame` (SF_ERR_EXECUTOR_BAD_FRAME), and nothing runs.
 */
export interface ExecFrame extends Pick<
  ResolvedExecRequest,
  'code' | 'stdin' | 'timeout_ms' | 'memory_mb' | 'files' | 'fetch_files' | 'isolation'
> {
  op: 'exec'
  /** The channel's own id of the job, echoed by every frame about it. */
  id: string
  /** The cap of each of stdout and stderr. */
  max_output_bytes: number
  /** What is left of the job's queue budget (`Job.startBy`): its longest wait for a warming tier; null: no limit. */
  wait_ms: number | null
  /** The tenant the job runs for; null: the one tenant of a fleet without API keys. */
  tenant: string | null
}

/** The `exec` frame of `job` as executor job `id`; `waitMs`: what is left of its wait. */
function execFrame(id: string, job: Job, waitMs: number | null): string {
  const r = job.request
  const frame: ExecFrame = {
    op: 'exec',
    id,
    code: r.code,
    stdin: r.stdin,
    timeout_ms: r.timeout_ms,
    memory_mb: r.memory_mb,
    files: r.files,
    fetch_files: r.fetch_files,
    max_output_bytes: job.maxOutputBytes,
    isolation: r.isolation,
    wait_ms: waitMs,
    tenant: job.tenant ?? null
  }
  return JSON.stringify(frame)
}

/** Options of an {@link ExecutorChannel}. */
export interface ExecutorChannelOptions {
  /** Receives the executor's `log` frames. */
  onLog?: (level: string, message: string) => void
  /** Where the `reuse` level's events go. */
  events?: DriverEvents
}

/** Where a streamed cell's output goes as it comes (a session's `output` frames): its stream, its text. */
export type OutputListener = (stream: 'stdout' | 'stderr', text: string) => void

interface Pending {
  id: string
  resolve: (o: RunOutcome) => void
  output: OutputListener | undefined
  watch: JobWatch | undefined
  askedReuse: boolean
  started: boolean
  /** A judge's: where its `compiled` and `tested` frames go; whether its stop was sent. */
  judge?: { sink: JudgeSink; stopped: boolean; acks: boolean }
}

/** The `fetch_errors` of a result frame, when it names any. */
function fetchErrorsOf(frame: { fetch_errors?: unknown }): Record<string, string> | undefined {
  const errors = frame.fetch_errors
  return errors !== null && typeof errors === 'object' && Object.keys(errors).length > 0
    ? (errors as Record<string, string>)
    : undefined
}

/**
 * The executor's names for its fleet faults (docs/executor-protocol.md), with the status it
 * answers each with, and the runner's registered code that replaces the name in `error.type`.
 * Keyed by status too: a job's own exception of the same name is status `error`, and kept.
 */
const EXECUTOR_FAULTS: Readonly<Record<string, { status: RunOutcome['status']; code: RunnerErrorCode }>> =
  Object.freeze({
    ReuseViolation: { status: 'infra_error', code: 'SF_ERR_RUNNER_REUSE_VIOLATION' },
    BadFrame: { status: 'infra_error', code: 'SF_ERR_EXECUTOR_BAD_FRAME' },
    ZygoteExited: { status: 'killed', code: 'SF_ERR_EXECUTOR_ZYGOTE_EXITED' },
    SpareExited: { status: 'killed', code: 'SF_ERR_EXECUTOR_SPARE_EXITED' }
  })

/** A result frame's error, its type the registered code when it names one of {@link EXECUTOR_FAULTS}. */
function errorOf(frame: { status?: unknown; error?: RunOutcome['error'] }): RunOutcome['error'] {
  const error = frame.error ?? null
  if (error === null || !Object.hasOwn(EXECUTOR_FAULTS, error.type)) return error
  const fault = EXECUTOR_FAULTS[error.type]
  return fault.status === frame.status ? { type: fault.code, message: String(error.message) } : error
}

/** A reason the executor gives, as a metric's label: one short word of its closed set, else `other`. */
function label(reason: unknown): string {
  return typeof reason === 'string' && /^[a-z_]{1,24}$/.test(reason) ? reason : 'other'
}

/** One executor's frame channel: `ready()`, then `run()` one job at a time. */
export class ExecutorChannel {
  private buffered: Buffer[] = []
  private pending: Pending | undefined
  private readyWaiter: { resolve: (f: ReadyFrame) => void; reject: (e: Error) => void } | undefined
  private readyFrame: ReadyFrame | undefined
  private seq = 0
  private isClosed = false

  /** `input` is the executor's stdout, `output` its stdin. */
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: ExecutorChannelOptions = {}
  ) {
    input.on('data', (chunk: Buffer) => {
      this.onData(chunk)
    })
    input.on('end', () => {
      this.onEnd()
    })
    input.on('close', () => {
      this.onEnd()
    })
    input.on('error', () => {
      this.onEnd()
    })
    output.on('error', () => {
      this.onEnd()
    })
  }

  /** True once the executor's output ended or {@link close} was called. */
  get closed(): boolean {
    return this.isClosed
  }

  /** Resolves on the `ready` frame; rejects on EOF or after `timeoutMs`. */
  async ready(timeoutMs: number): Promise<ReadyFrame> {
    if (this.readyFrame !== undefined) return this.readyFrame
    if (this.isClosed) throw new Error('executor exited before it was ready')
    return await new Promise<ReadyFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiter = undefined
        reject(new Error(`executor not ready within ${timeoutMs} ms`))
      }, timeoutMs)
      this.readyWaiter = {
        resolve: (f) => {
          clearTimeout(timer)
          resolve(f)
        },
        reject: (e) => {
          clearTimeout(timer)
          reject(e)
        }
      }
    })
  }

  /**
   * Sends one `exec` (a job with `judge`: one `judge` frame, its `compiled` and `tested` frames
   * to its sink as they come, each answered with an ack or the stop) and resolves on its result,
   * or `killed` when the executor ends first (see the protocol's deadlines: the executor stops the
   * job at `timeout_ms`; the hard deadline is the pool's, told through `watch` when the job waits
   * for a tier still warming, and moved by each step of a judge). `output` takes the job's `output` frames, which a
   * session sends for a cell asked to stream.
   */
  async run(job: Job, watch?: JobWatch, output?: OutputListener): Promise<RunOutcome> {
    if (this.isClosed)
      return failedOutcome('killed', 'SF_ERR_EXECUTOR_CLOSED', 'the executor is gone', { retire: 'exited' })
    if (this.pending !== undefined) throw new Error('ExecutorChannel.run: a job is already running')
    const r = job.request
    const id = String(++this.seq)
    // The executor is another process (another clock): it gets what is left of the job's wait.
    const waitLimitMs = job.startBy === undefined ? null : Math.max(0, Math.round(job.startBy - performance.now()))
    const frame =
      job.judge !== undefined ? judgeFrame(id, job, job.judge, waitLimitMs) : execFrame(id, job, waitLimitMs)
    return await new Promise<RunOutcome>((resolve) => {
      this.pending = { id, resolve, output, watch, askedReuse: r.isolation === 'reuse', started: false }
      if (job.judge !== undefined) {
        this.pending.judge = { sink: job.judge.sink, stopped: false, acks: job.judge.ackWindow > 0 }
        job.judge.sink.begin()
      }
      // A frame past the stream's buffer (a large stdin, files) leaves over many turns of the event
      // loop: the job's deadline counts from when all of it is out (JobWatch.delivered).
      if (frame.length < this.output.writableHighWaterMark || watch?.delivered === undefined)
        this.output.write(frame + '\n')
      else
        this.output.write(frame + '\n', () => {
          watch.delivered?.()
        })
    })
  }

  /** Stops listening; a running job resolves `killed`. Idempotent. */
  close(): void {
    this.onEnd()
  }

  private onData(chunk: Buffer): void {
    let start = 0
    let nl = chunk.indexOf(10)
    while (nl !== -1) {
      let line: Buffer
      if (this.buffered.length > 0) {
        this.buffered.push(chunk.subarray(start, nl))
        line = Buffer.concat(this.buffered)
        this.buffered = []
      } else line = chunk.subarray(start, nl)
      if (line.length > 0) this.onFrame(line)
      start = nl + 1
      nl = chunk.indexOf(10, start)
    }
    if (start < chunk.length) this.buffered.push(chunk.subarray(start))
  }

  private onFrame(line: Buffer): void {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each op's fields are read as its case knows them
    let frame: any
    try {
      frame = JSON.parse(line.toString('utf8'))
    } catch {
      this.options.onLog?.('error', 'executor sent a line that is not JSON')
      return
    }
    switch (frame.op) {
      case 'result': {
        const p = this.pending
        if (p === undefined || frame.id !== p.id) return
        this.pending = undefined
        const outcome: RunOutcome = {
          status: frame.status,
          stdout: frame.stdout,
          stderr: frame.stderr,
          exit_code: frame.exit_code,
          duration_ms: frame.duration_ms,
          truncated: frame.truncated,
          error: errorOf(frame),
          files: frame.files ?? {}
        }
        const fetchErrors = fetchErrorsOf(frame)
        if (fetchErrors !== undefined) outcome.fetch_errors = fetchErrors
        if (frame.retire === true) {
          outcome.retire = true
          outcome.retire_reason = retireReasonOf(frame.retire_reason)
        }
        if (typeof frame.cpu_ms === 'number' && frame.cpu_ms >= 0) outcome.cpu_ms = frame.cpu_ms
        if (typeof frame.tier === 'string') outcome.tier = frame.tier
        if (typeof frame.waited_ms === 'number') outcome.waited_ms = frame.waited_ms
        if (Array.isArray(frame.display)) outcome.display = frame.display
        if (typeof frame.pid === 'number') outcome.pid = frame.pid
        if (frame.isolation === 'fork' || frame.isolation === 'reuse') {
          outcome.isolation = frame.isolation
          if (p.askedReuse)
            this.options.events?.reuse?.({
              kind: 'ran',
              level: frame.isolation,
              refused: frame.reuse_refused === undefined ? undefined : label(frame.reuse_refused)
            })
        }
        p.resolve(outcome)
        return
      }
      case 'compiled':
      case 'tested': {
        // A step of a judge ended: its sink has it, and the next step's time counts from here.
        const p = this.pending
        if (p?.judge === undefined || frame.id !== p.id) return
        p.watch?.progressed?.()
        let stop = true
        try {
          if (frame.op === 'compiled') {
            p.judge.sink.compiled(compiledOf(frame))
            return
          }
          stop = p.judge.sink.tested(testedOf(frame))
        } catch (err) {
          // the runner's own fault on one frame: the judge stops, its verdict what it had found
          this.options.onLog?.('error', `a judge's frame could not be taken: ${String(err)}`)
        }
        if (p.judge.stopped) return
        if (stop) {
          p.judge.stopped = true
          this.output.write(judgeStopFrame(p.id) + '\n')
        } else if (p.judge.acks) this.output.write(judgeAckFrame(p.id, Number(frame.index)) + '\n')
        return
      }
      case 'output': {
        const p = this.pending
        if (p === undefined || frame.id !== p.id || typeof frame.text !== 'string') return
        if (frame.stream !== 'stdout' && frame.stream !== 'stderr') return
        try {
          p.output?.(frame.stream, frame.text)
        } catch (err) {
          // the listener's own fault (a caller gone): the job runs on, its result whole
          this.options.onLog?.('error', `a cell's output could not be taken: ${String(err)}`)
        }
        return
      }
      case 'retired':
        this.options.events?.reuse?.({ kind: 'retired', reason: label(frame.reason) })
        return
      case 'ready':
        this.readyFrame = frame as ReadyFrame
        this.readyWaiter?.resolve(frame as ReadyFrame)
        this.readyWaiter = undefined
        return
      case 'waiting':
        if (this.pending !== undefined && frame.id === this.pending.id) this.pending.watch?.waiting()
        return
      case 'started': {
        // A job larger than a pipe holds reached its process only now: its time counts from here (once per job).
        const p = this.pending
        if (p !== undefined && frame.id === p.id && !p.started) {
          p.started = true
          p.watch?.delivered?.()
        }
        return
      }
      case 'tier':
        if (frame.ready !== true)
          this.options.onLog?.('warn', `executor tier ${String(frame.name)} is gone; its jobs run on bare`)
        return
      case 'log':
        this.options.onLog?.(String(frame.level), String(frame.message))
        return
      default:
    }
  }

  private onEnd(): void {
    if (this.isClosed) return
    this.isClosed = true
    this.readyWaiter?.reject(new Error('executor exited before it was ready'))
    this.readyWaiter = undefined
    const p = this.pending
    if (p !== undefined) {
      this.pending = undefined
      p.resolve(
        failedOutcome('killed', 'SF_ERR_EXECUTOR_EXITED', 'the executor exited while the job ran', { retire: 'exited' })
      )
    }
  }
}
