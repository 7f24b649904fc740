/**
 * One pyodide sandbox: a Pyodide interpreter booted from the host's memory snapshot inside its
 * own isolated-vm isolate, in the pyodide host process (pyodide-host-main.ts; the runner sees it
 * through remote-pyodide-sandbox.ts). After every job its wasm memory is put back to the baseline image
 * (pyodide-job.js), off the response path; a job that touched what the image does not hold
 * (the JavaScript side, the file system outside /tmp, /mnt and /dev/shm, which are emptied)
 * retires the sandbox instead.
 *
 * Timeouts: at `timeout_ms` the soft stop, SIGTERM through Pyodide's interrupt buffer: the
 * harness's handler raises KeyboardInterrupt, or the job's own handler runs (it may print and
 * exit); pure-Python code stops and the sandbox lives on. Code that ignores it (or sits in one
 * long call into C) is stopped by isolated-vm's hard timeout `softGraceMs` later, and that
 * isolate is discarded; what the job wrote to its streams comes back either way. An isolate that
 * does not stop even then is the runner's pool's to handle: its job's hard deadline retires the
 * sandbox, whose close disposes the isolate (or kills the host that does not answer).
 *
 * Memory: a `MemoryError` at `memory_mb` (the wasm heap's growth is capped there) keeps the
 * sandbox like any job's end, unless the job grew the wasm memory by more than 64 MiB: wasm memory
 * cannot shrink, so that isolate is replaced (`grown`). An isolate whose JavaScript heap went over
 * its limit is gone (`oom`). Pyodide has no signals: no job of it ends `killed`.
 *
 * `cpu_ms`: the isolate's CPU over the job's call (isolated-vm's `cpuTime`, the thread CPU clock);
 * the restore after it is not in it.
 */
import { randomBytes } from 'node:crypto'
import { posix } from 'node:path'
import type IvmModule from 'isolated-vm'
import { FILE_PLACES } from '@sandfleet/protocol'
import {
  SANDBOX_MAX_FILE_MB,
  type Job,
  type RunOutcome,
  type Sandbox,
  type SandboxState,
  type SandboxStats
} from '../../sandbox/contract.ts'
import { disposeAfter, isolateStats } from '../../kits/isolate/isolate-life.ts'
import { failedOutcome, type Written } from '../../sandbox/failed-outcome.ts'
import { retireReasonOf, type RetireReason } from '../../sandbox/retire-reasons.ts'
import { PYODIDE_JOB_FILES_MB, type PyodideAssets } from './pyodide-assets.ts'
import { RunnerError } from '../../errors.ts'

/** Options of a {@link PyodideSandbox}. */
export interface PyodideSandboxOptions {
  /** After the soft interrupt, how long the code has before the isolate is stopped hard. */
  softGraceMs: number
}

interface JobResult {
  outcome: {
    status: 'ok' | 'error' | 'memory'
    exit_code: number
    error: { type: string; message: string; traceback?: string } | null
  } | null
  crashed: string | null
  stdout: string
  stderr: string
  truncated: { stdout: boolean; stderr: boolean }
  files: Record<string, Uint8Array>
  fetchErrors: Record<string, string>
  clean: boolean
  why: string
  /** With `clean: false`: why, one word (`ffi`, `files`, `cleanup`, `broken`, `grown`). */
  reason: string
}

type Fn = IvmModule.Reference<(...args: unknown[]) => unknown>

/** The job's working directory, and the places its files may be written to and fetched from. */
const WORK_DIR = '/tmp/work'
const PLACES = [WORK_DIR, ...FILE_PLACES]

/**
 * `path` (relative to the working directory, or absolute) made absolute, or why it may not be used: not inside a place.
 */
function placed(path: string): { abs: string } | { refused: string } {
  const abs = posix.resolve(WORK_DIR, path)
  if (!path.includes('\0') && PLACES.some((p) => abs.startsWith(p + '/'))) return { abs }
  return { refused: `${JSON.stringify(path)} is outside the sandbox's writable places (${PLACES.join(', ')})` }
}

/** SIGTERM, as the interrupt buffer carries it: the soft stop. */
const SIGTERM = 15

/** A Pyodide interpreter in an isolate; see the module comment. */
export class PyodideSandbox implements Sandbox {
  private current: SandboxState = 'starting'
  private isolate: IvmModule.Isolate | undefined
  private context: IvmModule.Context | undefined
  private jobFn: Fn | undefined
  private restoreFn: Fn | undefined
  private partialFn: Fn | undefined
  private restoring: Promise<unknown> | undefined
  private readonly interrupt = new Int32Array(new SharedArrayBuffer(4))
  private jobs = 0
  private memoryBytes: number | undefined
  private measuredAt = -Infinity
  /** Bytes of the baseline memory image (after start). */
  baselineBytes = 0
  /**
   * How long each phase of {@link start} took, in ms (isolate with the glue, boot from the snapshot, harness and
   * baseline).
   */
  readonly startMs = { isolate: 0, boot: 0, harness: 0 }

  constructor(
    readonly id: string,
    private readonly assets: PyodideAssets,
    private readonly options: PyodideSandboxOptions
  ) {}

  /** The lifecycle state. */
  get state(): SandboxState {
    return this.current
  }

  /** Boots from the snapshot, runs the harness and takes the baseline image. */
  async start(): Promise<void> {
    const ivm = this.assets.ivm
    try {
      if (this.assets.snapshot === undefined) throw new Error('no snapshot prepared')
      let t = performance.now()
      const { isolate, context } = await this.assets.isolate()
      this.startMs.isolate = performance.now() - t
      t = performance.now()
      this.isolate = isolate
      this.context = context
      const g = context.global
      await g.set('__sf_snap', new ivm.ExternalCopy(this.assets.snapshot).copyInto({ release: true }))
      await g.set('__sf_interrupt', new ivm.ExternalCopy(this.interrupt).copyInto({ release: true }))
      await g.set('__sf_harness', this.assets.harness)
      await g.set('__sf_maxFileBytes', SANDBOX_MAX_FILE_MB * 1024 * 1024)
      await g.set('__sf_maxJobFileBytes', PYODIDE_JOB_FILES_MB * 1024 * 1024)
      await context.eval(
        '(async () => { globalThis.__sf_py = await loadPyodide({ indexURL: "/p/", _loadSnapshot: __sf_snap }); delete globalThis.__sf_snap; __sf_mountPackages(globalThis.__sf_py) })()',
        { promise: true, timeout: 60_000 }
      )
      this.startMs.boot = performance.now() - t
      t = performance.now()
      const script = await isolate.compileScript(this.assets.job, { filename: 'pyodide-job.js' })
      const api = (await script.run(context, { reference: true, timeout: 60_000 })) as IvmModule.Reference<
        Record<string, unknown>
      >
      script.release()
      this.jobFn = (await api.get('job', { reference: true })) as Fn
      this.restoreFn = (await api.get('restore', { reference: true })) as Fn
      this.partialFn = (await api.get('partial', { reference: true })) as Fn
      const info = (await api.get('info', { copy: true })) as { baselineBytes: number }
      this.baselineBytes = info.baselineBytes
      api.release()
      this.startMs.harness = performance.now() - t
      this.current = 'ready'
    } catch (err) {
      let logs = ''
      try {
        logs = String((await this.context?.eval('__sf_logs.join("; ")', { copy: true, timeout: 100 })) ?? '')
      } catch {}
      await this.close()
      throw new Error(
        `pyodide sandbox ${this.id} did not start: ${(err as Error).message}${logs !== '' ? ` (${logs.slice(0, 500)})` : ''}`
      )
    }
  }

  /** Runs one job; see the driver's contract. */
  async execute(job: Job): Promise<RunOutcome> {
    if (this.current !== 'ready') throw new Error(`sandbox ${this.id} is ${this.current}`)
    this.current = 'busy'
    try {
      if (this.restoring !== undefined) {
        await this.restoring
        this.restoring = undefined
      }
      // A restore that failed discarded the isolate: the fleet's fault, not the next job's.
      if (this.isolate === undefined || this.isolate.isDisposed)
        throw new RunnerError('SF_ERR_RUNNER_SANDBOX_FAILED', `sandbox ${this.id}: its memory could not be restored`)
      return await this.run(job)
    } finally {
      if (this.current === 'busy') this.current = 'ready'
    }
  }

  private async run(job: Job): Promise<RunOutcome> {
    const ivm = this.assets.ivm
    const r = job.request
    const files: Record<string, Uint8Array> = {}
    for (const [path, b64] of Object.entries(r.files)) {
      const where = placed(path)
      if ('refused' in where) return failedOutcome('error', 'ValueError', `files: ${where.refused}`, { retire: false })
      files[where.abs] = new Uint8Array(Buffer.from(b64, 'base64'))
    }
    const fetch: Array<[string, string]> = []
    const fetchErrors: Record<string, string> = {}
    for (const path of r.fetch_files) {
      const where = placed(path)
      if ('refused' in where) fetchErrors[path] = where.refused
      else fetch.push([path, where.abs])
    }
    const started = performance.now()
    const isolate = this.isolate as IvmModule.Isolate
    const cpuFrom = isolate.cpuTime
    /**
     * The isolate's CPU since the job's call (isolated-vm's `cpuTime`: the thread CPU clock), or nothing once it is
     * disposed.
     */
    const cpu = (): { cpuMs?: number } => {
      try {
        return { cpuMs: Number(isolate.cpuTime - cpuFrom) / 1e6 }
      } catch {
        return {}
      }
    }
    let softFired = false
    Atomics.store(this.interrupt, 0, 0)
    const soft = setTimeout(() => {
      softFired = true
      Atomics.store(this.interrupt, 0, SIGTERM)
    }, r.timeout_ms)
    let result: JobResult
    try {
      const call = (this.jobFn as Fn).apply(
        undefined,
        [
          r.code,
          r.stdin,
          new ivm.ExternalCopy(files).copyInto({ release: true }),
          new ivm.ExternalCopy(fetch).copyInto({ release: true }),
          job.maxOutputBytes,
          r.memory_mb * 1024 * 1024,
          new ivm.ExternalCopy(new Uint8Array(randomBytes(256))).copyInto({ release: true })
        ],
        { timeout: r.timeout_ms + this.options.softGraceMs, result: { copy: true } }
      ) as Promise<JobResult>
      result = await call
    } catch (err) {
      const elapsed = performance.now() - started
      const message = (err as Error)?.message ?? String(err)
      const ran = cpu()
      if (/timed out/i.test(message)) {
        // isolated-vm cut the interpreter mid-call: its wasm globals (the stack pointer among
        // them) and the JavaScript side are outside the memory image a restore puts back.
        const written = await this.partial()
        this.discard()
        return failedOutcome(
          'timeout',
          'Timeout',
          `the run exceeded timeout_ms=${r.timeout_ms} and did not end within ${this.options.softGraceMs} ms of its soft stop`,
          { durationMs: elapsed, written, ...ran, retire: 'hard_stop' }
        )
      }
      this.discard()
      if (/memory limit/i.test(message))
        return failedOutcome('memory', 'MemoryError', "the interpreter's JavaScript heap went over its limit", {
          durationMs: elapsed,
          ...ran,
          retire: 'oom'
        })
      // The job ran and the isolate failed around it (a JavaScript callback it scheduled threw):
      // the code's doing, and the isolate is discarded.
      return failedOutcome(
        'error',
        'SF_ERR_RUNNER_PYODIDE_BROKEN',
        `the code broke its sandbox: ${message.slice(0, 500)}`,
        { durationMs: elapsed, ...ran, retire: 'broken' }
      )
    } finally {
      clearTimeout(soft)
    }
    const elapsed = performance.now() - started
    const ran = cpu()
    this.jobs++
    const out = result.outcome
    const retire: RetireReason | false = result.clean ? false : retireReasonOf(result.reason)
    let outcome: RunOutcome
    // Python took the soft stop (it clears the buffer as it runs the handler): whatever the job did
    // then (the harness's KeyboardInterrupt, or its own handler that printed and exited), a timeout.
    if (softFired && (out === null || Atomics.load(this.interrupt, 0) === 0)) {
      outcome = failedOutcome('timeout', 'Timeout', `the run exceeded timeout_ms=${r.timeout_ms}`, {
        durationMs: elapsed,
        written: result,
        ...ran,
        retire
      })
    } else if (out === null) {
      outcome = failedOutcome(
        'error',
        'SF_ERR_RUNNER_PYODIDE_BROKEN',
        `the code broke the job runner: ${(result.crashed ?? 'no outcome').slice(-500)}`,
        { durationMs: elapsed, written: result, ...ran, retire: 'broken' }
      )
    } else {
      outcome = {
        status: out.status,
        stdout: result.stdout,
        stderr: result.stderr,
        exit_code: out.exit_code,
        duration_ms: elapsed,
        truncated: result.truncated,
        error:
          out.error === null
            ? null
            : {
                type: String(out.error.type),
                message: String(out.error.message),
                ...(out.error.traceback !== undefined ? { traceback: String(out.error.traceback) } : {})
              },
        files: {}
      }
      if (ran.cpuMs !== undefined) outcome.cpu_ms = ran.cpuMs
      if (retire !== false) {
        outcome.retire = true
        outcome.retire_reason = retire
      }
    }
    for (const [path, data] of Object.entries(result.files ?? {})) {
      if (data instanceof Uint8Array)
        outcome.files[path] = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')
    }
    Object.assign(fetchErrors, result.fetchErrors)
    if (Object.keys(fetchErrors).length > 0) outcome.fetch_errors = fetchErrors
    if (outcome.retire !== true) {
      // Put the interpreter back while the result travels; the next job waits for it. Started
      // on the next turn, once the host has sent the result: starting an isolated-vm call holds
      // this thread a while, and the restore need not delay the answer.
      const restoreFn = this.restoreFn as Fn
      this.restoring = new Promise((resolve) => {
        setImmediate(() => {
          resolve(
            restoreFn.apply(undefined, [], { timeout: 10_000 }).catch(() => {
              this.discard()
            })
          )
        })
      })
    } else {
      this.current = 'closing'
    }
    return outcome
  }

  /** What a job stopped hard had written to its streams (nothing when the isolate cannot say). */
  private async partial(): Promise<Written> {
    try {
      return (await (this.partialFn as Fn).apply(undefined, [], { timeout: 1000, result: { copy: true } })) as Written
    } catch {
      return {}
    }
  }

  private discard(): void {
    this.current = 'closing'
    if (this.isolate?.isDisposed === false) this.isolate.dispose()
  }

  /** Jobs run and memory held (wasm heap and the JavaScript heap). Waits for the isolate: not for a hot path. */
  stats(): SandboxStats {
    return isolateStats(this.isolate, this.jobs)
  }

  /**
   * Measures the isolate's memory without blocking this thread (at most once a second; it runs
   * after the isolate's work in flight, such as a restore) and returns {@link lastStats}.
   */
  async measure(): Promise<SandboxStats> {
    const now = performance.now()
    if (now - this.measuredAt >= 1000 && this.isolate?.isDisposed === false) {
      this.measuredAt = now
      try {
        const heap = await this.isolate.getHeapStatistics()
        this.memoryBytes = heap.used_heap_size + heap.externally_allocated_size
      } catch {}
    }
    return this.lastStats()
  }

  /** Jobs run, and the memory as last {@link measure}d. */
  lastStats(): SandboxStats {
    return this.memoryBytes === undefined ? { jobs: this.jobs } : { jobs: this.jobs, memoryBytes: this.memoryBytes }
  }

  /** Disposes the isolate (after a restore in flight: disposing under it can crash the process). Idempotent. */
  async close(): Promise<void> {
    if (this.current === 'closed') return
    this.current = 'closed'
    await disposeAfter(this.isolate, this.restoring)
    this.isolate = undefined
    this.context = undefined
    this.jobFn = undefined
    this.restoreFn = undefined
    this.partialFn = undefined
  }
}
