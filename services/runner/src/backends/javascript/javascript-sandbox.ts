/**
 * One javascript sandbox: an isolated-vm isolate that runs each job in a fresh context. The next
 * job's context is asked for as soon as a job's call is sent (queued behind it on the isolate's
 * thread) and gets the codec and harness evaluated in it, so a job that finishes synchronously
 * costs one call into the isolate, answered with its result copied out. See
 * `drivers/javascript.ts` for the contract it keeps.
 */
import { readFileSync } from 'node:fs'
import type IvmModule from 'isolated-vm'
import type { Job, RunOutcome, Sandbox, SandboxState, SandboxStats } from '../../sandbox/contract.ts'
import { disposeAfter, isolateStats } from '../../kits/isolate/isolate-life.ts'
import { failedOutcome } from '../../sandbox/failed-outcome.ts'
import { RunnerError } from '../../errors.ts'

/** The isolated-vm module. */
export type Ivm = typeof IvmModule

/**
 * The JavaScript evaluated in every context: text-codec.js then js-harness.js, one script (one call into the isolate).
 */
export interface IsolateSources {
  context: string
}

/** Reads text-codec.js and js-harness.js (once per driver). */
export function loadIsolateSources(): IsolateSources {
  const codec = readFileSync(new URL('../../kits/isolate/text-codec.js', import.meta.url), 'utf8')
  const harness = readFileSync(new URL('./js-harness.js', import.meta.url), 'utf8')
  return { context: `${codec};\n${harness}` }
}

/** Options of a {@link JavascriptSandbox}. */
export interface JavascriptSandboxOptions {
  /** Heap limit the isolate is first built with (a job with another memory_mb rebuilds it). */
  defaultMemoryMb: number
}

/**
 * The job function of js-harness.js: the result, or null when the code returned a promise; then
 * `job(null)` gives a promise of the result.
 */
type JobFunction = (
  code: string | null,
  stdin?: string,
  files?: Record<string, Uint8Array>,
  maxOutputBytes?: number
) => HarnessResult | null | Promise<HarnessResult>

interface Prepared {
  context: IvmModule.Context
  job: IvmModule.Reference<JobFunction>
}

interface HarnessResult {
  stdout: string
  stderr: string
  truncated: { stdout: boolean; stderr: boolean }
  files: Record<string, Uint8Array>
  error: { type: string; message: string; traceback: string } | null
}

const MEMORY = /memory limit|out of memory|allocation failed|array buffer allocation/i

/** The outcome of code that ran to its end: `ok`, or `error` with what it threw; the sandbox serves on. */
function completed(durationMs: number, settled: HarnessResult, error: RunOutcome['error']): RunOutcome {
  return {
    status: error === null ? 'ok' : 'error',
    stdout: typeof settled.stdout === 'string' ? settled.stdout : '',
    stderr: typeof settled.stderr === 'string' ? settled.stderr : '',
    exit_code: error === null ? 0 : 1,
    duration_ms: durationMs,
    truncated: { stdout: settled.truncated?.stdout === true, stderr: settled.truncated?.stderr === true },
    error,
    files: {}
  }
}

/**
 * A job's CPU: the isolate's own count (`cpuTime`: the CPU clock of the thread running it, summed
 * over its calls) from the job's call to its answer, less the spans {@link pause}d (the next job's
 * context made on the same thread). The context queued behind a synchronous job may have begun on
 * the isolate's thread when the answer is read: a fraction of a millisecond of it can be counted.
 */
class JobCpu {
  #ns = 0n
  #from: bigint | undefined
  constructor(private readonly isolate: IvmModule.Isolate) {
    this.#from = this.#now()
  }

  #now(): bigint | undefined {
    try {
      return this.isolate.cpuTime
    } catch {
      return undefined
    }
  }

  pause(): void {
    const now = this.#now()
    if (now !== undefined && this.#from !== undefined) this.#ns += now - this.#from
    this.#from = undefined
  }

  resume(): void {
    this.#from = this.#now()
  }

  /** `{ cpuMs }` so far, or `{}` when the isolate can no longer say (disposed). */
  end(): { cpuMs?: number } {
    const now = this.#now()
    if (now === undefined || this.#from === undefined) return {}
    return { cpuMs: Number(this.#ns + now - this.#from) / 1e6 }
  }
}

/**
 * The request's files as the job function takes them: path → bytes, copied into the isolate; undefined when there are
 * none.
 */
function filesIn(ivm: Ivm, files: Record<string, string>): IvmModule.Copy<Record<string, Uint8Array>> | undefined {
  let bytes: Record<string, Uint8Array> | undefined
  for (const path in files) {
    bytes ??= {}
    bytes[path] = new Uint8Array(Buffer.from(files[path], 'base64'))
  }
  return bytes === undefined ? undefined : new ivm.ExternalCopy(bytes).copyInto({ release: true })
}

/** An isolate that runs one job at a time, each in a fresh context. */
export class JavascriptSandbox implements Sandbox {
  private current: SandboxState = 'starting'
  private isolate: IvmModule.Isolate | undefined
  private limitMb = 0
  private script: IvmModule.Script | undefined
  private next: Promise<Prepared> | undefined
  private jobs = 0

  constructor(
    readonly id: string,
    private readonly ivm: Ivm,
    private readonly sources: IsolateSources,
    private readonly options: JavascriptSandboxOptions
  ) {}

  /** The lifecycle state. */
  get state(): SandboxState {
    return this.current
  }

  /** Builds the isolate and prepares its first context. */
  async start(): Promise<void> {
    try {
      await this.build(this.options.defaultMemoryMb)
      await this.next
      this.current = 'ready'
    } catch (err) {
      await this.close()
      throw new Error(`javascript sandbox ${this.id} did not start: ${(err as Error).message}`)
    }
  }

  private async build(memoryMb: number): Promise<void> {
    if (this.isolate?.isDisposed === false) this.isolate.dispose()
    const isolate = new this.ivm.Isolate({ memoryLimit: memoryMb })
    this.isolate = isolate
    this.limitMb = memoryMb
    this.script = await isolate.compileScript(this.sources.context, { filename: 'sandfleet-harness.js' })
    this.next = this.prepare()
    this.next.catch(() => {})
  }

  /**
   * A fresh context with the codec and harness evaluated, and a reference to the job function.
   * The harness runs synchronously, from this thread, in the isolate that just made the context:
   * nothing else is queued on it then (every other call waits for `next`), so this takes the lock
   * at once and spares a round trip to the isolate's thread.
   */
  private async prepare(): Promise<Prepared> {
    const isolate = this.isolate
    const script = this.script
    if (isolate === undefined || script === undefined) throw new Error('no isolate')
    const context = await isolate.createContext()
    const job = script.runSync(context, { reference: true }) as IvmModule.Reference<JobFunction>
    return { context, job }
  }

  /**
   * The context prepared for the next job; when making it failed (the job before it left the
   * heap so full that the new context went over the limit, and isolated-vm disposed the
   * isolate), a new isolate and context, so that this job does not pay for the one before.
   */
  private async nextContext(memoryMb: number): Promise<Prepared> {
    try {
      return await (this.next as Promise<Prepared>)
    } catch {
      await this.build(memoryMb)
      return await (this.next as Promise<Prepared>)
    }
  }

  /** Runs one job in a fresh context; see the driver's contract. */
  async execute(job: Job): Promise<RunOutcome> {
    if (this.current !== 'ready') throw new Error(`sandbox ${this.id} is ${this.current}`)
    this.current = 'busy'
    const r = job.request
    try {
      if (r.memory_mb !== this.limitMb) {
        await this.next?.catch(() => {})
        await this.build(r.memory_mb)
      }
      const prepared = await this.nextContext(r.memory_mb)
      this.next = undefined
      const result = await this.run(prepared, job)
      this.jobs++
      return result
    } finally {
      if (this.current === 'busy') this.current = 'ready'
    }
  }

  private async run(prepared: Prepared, job: Job): Promise<RunOutcome> {
    const r = job.request
    const ivm = this.ivm
    const isolate = this.isolate as IvmModule.Isolate
    const started = performance.now()
    const cpu = new JobCpu(isolate)
    let settled: HarnessResult | 'unsettled'
    try {
      // Synchronous code (the common case) is answered by this one call, its result copied out.
      const call = prepared.job.apply(undefined, [r.code, r.stdin, filesIn(ivm, r.files), job.maxOutputBytes], {
        timeout: r.timeout_ms,
        result: { copy: true }
      }) as Promise<HarnessResult | null>
      // The next job's context is asked for now, queued behind this call: the isolate's thread
      // goes on to make it without being woken again (a job that retires the isolate wastes it).
      this.next = this.prepare()
      this.next.catch(() => {})
      const first = await call
      // The code returned a promise: wait for it in a second call, within what is left of the deadline.
      settled = first !== null ? first : await this.settle(prepared, started + r.timeout_ms, cpu)
    } catch (err) {
      const elapsed = performance.now() - started
      const message = (err as Error)?.message ?? String(err)
      if (isolate.isDisposed || MEMORY.test(message)) {
        // isolated-vm disposed the isolate at its heap limit: nothing of it is left to keep.
        this.dispose(prepared)
        return failedOutcome(
          'memory',
          'MemoryError',
          `the isolate went over its heap limit of memory_mb=${r.memory_mb}`,
          { durationMs: elapsed, ...cpu.end(), retire: 'oom' }
        )
      }
      if (/timed out/i.test(message)) {
        const ran = cpu.end()
        const partial = await this.partial(prepared)
        this.release(prepared)
        return failedOutcome('timeout', 'Timeout', `the code ran past timeout_ms=${r.timeout_ms}`, {
          durationMs: elapsed,
          written: partial,
          ...ran,
          retire: false
        })
      }
      this.dispose(prepared)
      throw new RunnerError('SF_ERR_RUNNER_SANDBOX_FAILED', `the isolate failed: ${message}`)
    }
    const elapsed = performance.now() - started
    const ran = cpu.end()
    if (settled === 'unsettled') {
      const partial = await this.partial(prepared)
      this.release(prepared)
      return failedOutcome(
        'timeout',
        'Timeout',
        `the code did not finish within timeout_ms=${r.timeout_ms} (a promise that never settled)`,
        { durationMs: elapsed, written: partial, ...ran, retire: false }
      )
    }
    const error = settled.error
    this.release(prepared)
    if (error !== null && error.type === 'RangeError' && MEMORY.test(String(error.message))) {
      // An allocation the isolate refused (an ArrayBuffer past the limit): the isolate lives on,
      // and what the job held goes with its context.
      return failedOutcome(
        'memory',
        'MemoryError',
        `an allocation went over the heap limit of memory_mb=${r.memory_mb}: ${String(error.message)}`,
        { durationMs: elapsed, written: settled, ...ran, retire: false }
      )
    }
    const done = completed(
      elapsed,
      settled,
      error === null
        ? null
        : { type: String(error.type), message: String(error.message), traceback: String(error.traceback) }
    )
    if (ran.cpuMs !== undefined) done.cpu_ms = ran.cpuMs
    const missing: Record<string, string> = {}
    for (const path of r.fetch_files) {
      const data = settled.files?.[path]
      if (data instanceof Uint8Array)
        done.files[path] = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')
      else missing[path] = 'no such file'
    }
    if (Object.keys(missing).length > 0) done.fetch_errors = missing
    return done
  }

  /**
   * The result of a job whose code returned a promise, or `'unsettled'` when it has not settled
   * by `deadlineAt`: isolated-vm's timeout bounds the isolate's work, not a wait for a promise.
   */
  private async settle(prepared: Prepared, deadlineAt: number, cpu: JobCpu): Promise<HarnessResult | 'unsettled'> {
    // The next job's context is made first, on the same thread: its CPU is not this job's.
    cpu.pause()
    await this.next?.catch(() => {})
    cpu.resume()
    const leftMs = Math.max(1, Math.ceil(deadlineAt - performance.now()))
    let timer: NodeJS.Timeout | undefined
    const unsettled = new Promise<'unsettled'>((resolve) => {
      timer = setTimeout(resolve, leftMs, 'unsettled')
    })
    try {
      return await Promise.race([
        prepared.job.apply(undefined, [null], {
          timeout: leftMs,
          result: { copy: true, promise: true }
        }) as Promise<HarnessResult>,
        unsettled
      ])
    } finally {
      clearTimeout(timer)
    }
  }

  /** What a timed-out job had written (the isolate survives isolated-vm's timeout). */
  private async partial(prepared: Prepared): Promise<Partial<HarnessResult> | undefined> {
    try {
      await this.next?.catch(() => {})
      return (await prepared.context.eval('__sandfleet_partial()', {
        timeout: 100,
        copy: true
      })) as Partial<HarnessResult>
    } catch {
      return undefined
    }
  }

  /** The job's context let go: the isolate serves the next job, in the context made for it. */
  private release(prepared: Prepared): void {
    try {
      prepared.job.release()
    } catch {}
    try {
      prepared.context.release()
    } catch {}
  }

  /** Out of service after this job: the isolate is disposed once the context queued behind the job settled. */
  private dispose(prepared: Prepared): void {
    try {
      prepared.context.release()
    } catch {}
    void disposeAfter(this.isolate, this.next)
    this.current = 'closing'
  }

  /** Jobs run and heap in use. */
  stats(): SandboxStats {
    return isolateStats(this.isolate, this.jobs)
  }

  /** Disposes the isolate (after a context being prepared: disposing under it can crash the process). Idempotent. */
  async close(): Promise<void> {
    if (this.current === 'closed') return
    this.current = 'closed'
    const { isolate, next } = this
    this.isolate = undefined
    this.next = undefined
    await disposeAfter(isolate, next)
  }
}
