/**
 * A pool of pre-warmed sandboxes of one driver, in front of a {@link JobQueue}.
 *
 * - A job goes straight to an idle sandbox when one is free and nobody is waiting; otherwise it
 *   waits in the FIFO (bounded → `overloaded`; past its deadline → `queue_timeout`, never run).
 * - A sandbox is replaced after an outcome with `retire`, after a rejected execute (that job is
 *   answered `infra_error`: the fleet's fault) and after `maxJobsPerSandbox` jobs. Replacement
 *   runs in the background and never blocks the other slots; a replacement that fails to start
 *   is retried with exponential backoff and reported. When every slot is failing to start, the
 *   queue is answered `infra_error` at once instead of hanging, and so is every new job until a
 *   sandbox comes up.
 * - Statistics (warm, busy, starting, queued, replacements, time to replace) are kept here once
 *   for every driver.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { failedResult, type ExecResult, type Language } from '@sandfleet/protocol'
import type { Driver, Job, RunOutcome, Sandbox } from '../backends/contract.ts'
import { codeOf, messageOf, RUNNER_ERRORS, type RunnerErrorCode } from '../errors.ts'
import { silentLogger, type Logger } from '../logger.ts'
import { JobQueue, type Ticket } from './queue.ts'
import { SignalGroups } from './signal-groups.ts'

/** Lifecycle of a pool. */
export type PoolState = 'starting' | 'ready' | 'draining' | 'closed'

/** Why a sandbox was replaced: its outcome asked for it, its execute rejected, or it ran K jobs. */
export type ReplaceReason = 'retire' | 'crash' | 'max_jobs'

/** Hooks a pool calls on rare events (metrics, logs). Job completions are not reported here. */
export interface PoolEvents {
  /** A replacement sandbox is ready, `ms` after the old one left service. */
  replaced?: (reason: ReplaceReason, ms: number) => void
  /** A sandbox failed to start (it will be retried). */
  startFailed?: (error: unknown) => void
}

/** Options of a {@link Pool}. */
export interface PoolOptions {
  driver: Driver
  /** The language this pool serves (one pool per language). */
  language: Language
  /** The runner's id, reported in every result. */
  runnerId: string
  /** Sandboxes kept warm. */
  size: number
  /** Jobs a sandbox runs before it is replaced; 0 for no limit. */
  maxJobsPerSandbox: number
  /** Jobs that may wait; beyond them a job is answered `overloaded`. */
  maxQueuedJobs: number
  /** Longest a job may wait for a sandbox. */
  queueTimeoutMs: number
  /** First retry delay for a sandbox that failed to start; doubles up to `replaceBackoffMaxMs`. */
  replaceBackoffMs: number
  replaceBackoffMaxMs: number
  logger?: Logger
  events?: PoolEvents
}

/** Per-job options of {@link Pool.run}. */
export interface RunOptions {
  /** Echoed in the result. */
  requestId?: string
  /** Aborting it answers the job at once while it still waits (`queue_timeout`, SF_ERR_RUNNER_CANCELLED). */
  signal?: AbortSignal
  /**
   * Longest this job may wait for a sandbox (the caller's budget, e.g. what is left of a
   * gateway's); the pool's `queueTimeoutMs` still caps it.
   */
  queueTimeoutMs?: number
}

/** A snapshot of a pool's counters. */
export interface PoolStats {
  language: Language
  driver: string
  state: PoolState
  /** Sandboxes the pool keeps. */
  size: number
  /** Idle and ready. */
  warm: number
  /** Running a job (equals jobs in flight). */
  busy: number
  /** Booting (first start or replacement). */
  starting: number
  /** Slots whose last start attempt failed and that wait to retry. */
  failing: number
  /** Jobs waiting. */
  queued: number
  queueLimit: number
  /** Sandboxes replaced since start. */
  replacements: number
  /** Sandbox start attempts that failed since start. */
  startFailures: number
  /** Time the last replacement took, from leaving service to ready, in ms (0 before any). */
  lastReplaceMs: number
  /** Jobs handed to a sandbox since start. */
  jobs: number
}

/** A sandbox the pool owns, with its job count. */
interface Slot {
  sandbox: Sandbox
  jobs: number
}

/** A job on its way through the pool. */
interface Call {
  job: Job
  requestId: string | undefined
  /** When it must have started, on the `performance.now()` clock. */
  startBy: number
  /** Its queue timeout, for the message of a `queue_timeout`. */
  queueTimeoutMs: number
}

/** A job waiting in the queue. */
interface Waiting {
  call: Call
  enqueuedAt: number
  resolve: (result: ExecResult) => void
  ticket: Ticket
  /** The jobs waiting under the same caller's signal, this one among them (none without a signal; see SignalGroups). */
  group: Set<Waiting> | undefined
}

type Done = (result: ExecResult) => void

/** N pre-warmed sandboxes of one driver; see the module comment. */
export class Pool {
  readonly language: Language
  readonly driver: Driver
  readonly #options: PoolOptions
  readonly #log: Logger
  readonly #queue: JobQueue<Waiting>
  readonly #idle: Slot[] = []
  /** Every sandbox not yet closed (starting, idle, busy), to close them all. */
  readonly #live = new Set<Sandbox>()
  readonly #stopping = new AbortController()
  #state: PoolState = 'starting'
  #busy = 0
  #starting = 0
  #failing = 0
  #lastStartError: unknown
  #nextId = 0
  #replacements = 0
  #startFailures = 0
  #lastReplaceMs = 0
  #jobs = 0
  #closing: Promise<void> | undefined
  #onIdle: (() => void) | undefined
  /** Jobs already run once more on a fresh sandbox after theirs was found tampered with. */
  readonly #rerun = new WeakSet<Job>()
  /** The waiting jobs by their caller's signal: one abort listener a signal, not one a job. */
  readonly #callers = new SignalGroups<Waiting>((jobs) => { this.#cancel(jobs) })

  constructor (options: PoolOptions) {
    this.#options = options
    this.language = options.language
    this.driver = options.driver
    this.#log = options.logger ?? silentLogger
    this.#queue = new JobQueue<Waiting>({ limit: options.maxQueuedJobs, onExpire: this.#expire })
  }

  /** The pool's lifecycle state. */
  get state (): PoolState {
    return this.#state
  }

  /**
   * Starts every sandbox. Resolves once each slot's first attempt finished and at least one
   * sandbox is ready (failed slots keep retrying in the background); rejects, closing the pool,
   * when none could start.
   */
  async start (): Promise<void> {
    const first = Array.from({ length: this.#options.size }, () => new Promise<boolean>((resolve) => { void this.#fill(undefined, resolve) }))
    const started = await Promise.all(first)
    if (!started.includes(true)) {
      const cause = this.#lastStartError
      await this.close(0)
      throw Object.assign(new Error(`no ${this.driver.name} sandbox could be started: ${messageOf(cause)}`, { cause }), { code: 'SF_ERR_RUNNER_POOL_START' })
    }
    if (this.#state === 'starting') this.#state = 'ready'
  }

  /**
   * Runs one job and resolves with its full result; never rejects. A job that cannot start
   * within its queue timeout (see {@link RunOptions}) is answered `queue_timeout` and never runs.
   */
  run (job: Job, options: RunOptions = {}): Promise<ExecResult> {
    return new Promise((resolve) => { this.submit(job, options, resolve) })
  }

  /**
   * {@link run} without a promise: `done` is called once with the full result, synchronously
   * when the job is answered at once (`overloaded`, draining, cancelled). For callers that hand
   * many jobs in at once (a batch), where a promise and its reactions per job cost more than the
   * queueing itself.
   */
  submit (job: Job, options: RunOptions, done: (result: ExecResult) => void): void {
    const asked = options.queueTimeoutMs
    const queueTimeoutMs = asked !== undefined && asked >= 0 ? Math.min(asked, this.#options.queueTimeoutMs) : this.#options.queueTimeoutMs
    this.#submit({ job, requestId: options.requestId, startBy: performance.now() + queueTimeoutMs, queueTimeoutMs }, options.signal, done)
  }

  #submit (call: Call, signal: AbortSignal | undefined, done: Done): void {
    const { requestId } = call
    if (this.#state === 'draining' || this.#state === 'closed') {
      done(this.#failed('infra_error', 'SF_ERR_RUNNER_DRAINING', 0, requestId))
      return
    }
    if (this.#idle.length > 0 && this.#queue.length === 0) {
      this.#runOn(this.#idle.pop() as Slot, call, 0, done)
      return
    }
    if (this.#failing === this.#options.size) {
      done(this.#failed('infra_error', 'SF_ERR_RUNNER_NO_SANDBOX', 0, requestId, `${RUNNER_ERRORS.SF_ERR_RUNNER_NO_SANDBOX.message}: ${messageOf(this.#lastStartError)}`))
      return
    }
    if (signal?.aborted === true) {
      done(this.#failed('queue_timeout', 'SF_ERR_RUNNER_CANCELLED', 0, requestId))
      return
    }
    const waiting: Waiting = { call, enqueuedAt: performance.now(), resolve: done, ticket: -1, group: undefined }
    const ticket = this.#queue.push(waiting, call.startBy)
    if (ticket === undefined) {
      done(this.#failed('overloaded', 'SF_ERR_RUNNER_OVERLOADED', 0, requestId, `${RUNNER_ERRORS.SF_ERR_RUNNER_OVERLOADED.message} (${this.#queue.limit} jobs waiting)`))
      return
    }
    waiting.ticket = ticket
    if (signal !== undefined) this.#callers.add(signal, waiting)
  }

  /** The caller went away: its jobs still waiting are answered, in the order they came, without running. */
  #cancel (jobs: ReadonlySet<Waiting>): void {
    for (const w of jobs) {
      if (this.#queue.cancel(w.ticket)) w.resolve(this.#failed('queue_timeout', 'SF_ERR_RUNNER_CANCELLED', performance.now() - w.enqueuedAt, w.call.requestId))
    }
    this.#checkIdle()
  }

  /** A snapshot of the counters (cheap; read on every load report and metrics scrape). */
  stats (): PoolStats {
    return {
      language: this.language,
      driver: this.driver.name,
      state: this.#state,
      size: this.#options.size,
      warm: this.#idle.length,
      busy: this.#busy,
      starting: this.#starting,
      failing: this.#failing,
      queued: this.#queue.length,
      queueLimit: this.#queue.limit,
      replacements: this.#replacements,
      startFailures: this.#startFailures,
      lastReplaceMs: this.#lastReplaceMs,
      jobs: this.#jobs
    }
  }

  /**
   * Drains, then closes every sandbox. New jobs are answered `infra_error` at once; queued and
   * running jobs may finish for `drainTimeoutMs`; whatever is still queued then is answered
   * `infra_error`, and running jobs are answered as their sandbox closes. Idempotent.
   */
  close (drainTimeoutMs = 0): Promise<void> {
    this.#closing ??= this.#close(drainTimeoutMs)
    return this.#closing
  }

  async #close (drainTimeoutMs: number): Promise<void> {
    this.#state = 'draining'
    if (drainTimeoutMs > 0 && (this.#busy > 0 || this.#queue.length > 0)) {
      const idle = new Promise<void>((resolve) => { this.#onIdle = resolve })
      const timeout = sleep(drainTimeoutMs, undefined, { ref: false })
      await Promise.race([idle, timeout])
      this.#onIdle = undefined
    }
    this.#state = 'closed'
    this.#stopping.abort()
    this.#queue.close()
    this.#queue.drain((w) => this.#answer(w, this.#failed('infra_error', 'SF_ERR_RUNNER_DRAINING', performance.now() - w.enqueuedAt, w.call.requestId)))
    this.#idle.length = 0
    await Promise.all([...this.#live].map(async (sandbox) => {
      try { await sandbox.close() } catch (err) { this.#log.warn({ sandbox: sandbox.id, err: messageOf(err) }, 'sandbox close failed') }
    }))
    this.#live.clear()
  }

  /** Hands one job to a sandbox; `done` gets the full result. */
  #runOn (slot: Slot, call: Call, queueMs: number, done: Done): void {
    this.#busy++
    this.#jobs++
    slot.jobs++
    let pending: Promise<RunOutcome>
    call.job.waitLimitMs = Math.max(0, Math.round(call.startBy - performance.now()))
    try {
      pending = slot.sandbox.execute(call.job)
    } catch (err) {
      pending = Promise.reject(err)
    }
    // No named closure per job: under tsx each one costs a defineProperty of its name.
    pending.then((outcome) => { this.#finish(slot, queueMs, call.requestId, done, outcome, undefined) }, (err: unknown) => { this.#rejected(slot, call, queueMs, done, err) })
  }

  /** A sandbox's execute rejected: its job is answered `infra_error`, or, when the sandbox was found tampered with before the job ran, run once more elsewhere. */
  #rejected (slot: Slot, call: Call, queueMs: number, done: Done, err: unknown): void {
    if (codeOf(err, '') === 'SF_ERR_RUNNER_SANDBOX_TAMPERED' && !this.#rerun.has(call.job) && this.#state !== 'closed') {
      // The job never ran: an earlier job had changed the sandbox's processes. Once more, on
      // another sandbox, within what is left of its queue timeout (its caller waits no longer).
      this.#rerun.add(call.job)
      this.#busy--
      this.#retire(slot, 'crash')
      this.#submit(call, undefined, done)
      return
    }
    this.#finish(slot, queueMs, call.requestId, done, undefined, err)
  }

  #finish (slot: Slot, queueMs: number, requestId: string | undefined, done: Done, outcome: RunOutcome | undefined, err: unknown): void {
    this.#busy--
    let result: ExecResult
    if (outcome?.status === 'queue_timeout') {
      // It never ran: the sandbox kept it waiting (a tier warming) until its queue timeout ran out.
      result = this.#failed('queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', queueMs + (outcome.waited_ms ?? 0), requestId, outcome.error?.message)
      result.sandbox = slot.sandbox.id
    } else if (outcome !== undefined) {
      result = {
        status: outcome.status,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
        exit_code: outcome.exit_code,
        duration_ms: outcome.duration_ms,
        queue_ms: queueMs + (outcome.waited_ms ?? 0),
        truncated: outcome.truncated,
        error: outcome.error,
        files: outcome.files,
        runner: this.#options.runnerId,
        sandbox: slot.sandbox.id
      }
      if (requestId !== undefined) result.request_id = requestId
    } else {
      if (this.#state !== 'closed') this.#log.warn({ sandbox: slot.sandbox.id, err: messageOf(err) }, 'sandbox execute failed; replacing it')
      result = this.#failed('infra_error', codeOf(err, 'SF_ERR_RUNNER_SANDBOX_FAILED'), queueMs, requestId,
        `${RUNNER_ERRORS.SF_ERR_RUNNER_SANDBOX_FAILED.message}: ${messageOf(err)}`)
      result.sandbox = slot.sandbox.id
    }
    const max = this.#options.maxJobsPerSandbox
    if (err !== undefined || outcome?.retire === true) this.#retire(slot, err !== undefined ? 'crash' : 'retire')
    else if (max > 0 && slot.jobs >= max) this.#retire(slot, 'max_jobs')
    else this.#release(slot)
    done(result)
  }

  /** A free sandbox takes the next waiting job, or goes idle. */
  #release (slot: Slot): void {
    if (this.#state === 'closed') return
    const next = this.#queue.shift()
    if (next !== undefined) {
      this.#callers.delete(next)
      this.#runOn(slot, next.call, performance.now() - next.enqueuedAt, next.resolve)
      return
    }
    this.#idle.push(slot)
    this.#checkIdle()
  }

  #checkIdle (): void {
    if (this.#onIdle !== undefined && this.#busy === 0 && this.#queue.length === 0) this.#onIdle()
  }

  /** Takes a sandbox out of service, closes it in the background and starts its replacement. */
  #retire (slot: Slot, reason: ReplaceReason): void {
    const { sandbox } = slot
    this.#live.delete(sandbox)
    sandbox.close().catch((err: unknown) => { this.#log.warn({ sandbox: sandbox.id, err: messageOf(err) }, 'sandbox close failed') })
    if (this.#state === 'closed') return
    this.#replacements++
    void this.#fill(reason)
    this.#checkIdle()
  }

  /** An idle sandbox died on its own: out of the idle list and replaced (a busy one is answered by its job). */
  #lost (slot: Slot): void {
    const i = this.#idle.indexOf(slot)
    if (i === -1 || this.#state === 'closed') return
    this.#idle.splice(i, 1)
    this.#log.warn({ sandbox: slot.sandbox.id }, 'idle sandbox died; replacing it')
    this.#retire(slot, 'crash')
  }

  /**
   * Brings one slot up: creates and starts a sandbox, retrying with backoff until one is ready
   * or the pool closes. `onFirstAttempt` learns whether the first attempt succeeded (start()
   * waits for that, not for the retries).
   */
  async #fill (reason: ReplaceReason | undefined, onFirstAttempt?: (ok: boolean) => void): Promise<void> {
    const since = performance.now()
    let delay = this.#options.replaceBackoffMs
    let failing = false
    let first = onFirstAttempt
    const report = (ok: boolean): void => { first?.(ok); first = undefined }
    while (this.#state !== 'closed') {
      const sandbox = this.driver.createSandbox(`${this.driver.name}-${this.language}-${this.#nextId++}`)
      this.#live.add(sandbox)
      this.#starting++
      let error: unknown
      let ok = true
      try { await sandbox.start() } catch (err) { ok = false; error = err }
      this.#starting--
      if (this.state === 'closed') {
        this.#live.delete(sandbox)
        await sandbox.close().catch(() => {})
        break
      }
      if (ok) {
        if (failing) this.#failing--
        if (reason !== undefined) {
          this.#lastReplaceMs = performance.now() - since
          this.#options.events?.replaced?.(reason, this.#lastReplaceMs)
        }
        report(true)
        const slot: Slot = { sandbox, jobs: 0 }
        sandbox.onExit?.(() => { this.#lost(slot) })
        this.#release(slot)
        return
      }
      this.#live.delete(sandbox)
      sandbox.close().catch(() => {})
      this.#startFailures++
      this.#lastStartError = error
      this.#options.events?.startFailed?.(error)
      this.#log.error({ sandbox: sandbox.id, retryInMs: delay, err: messageOf(error) }, 'sandbox failed to start; retrying')
      if (!failing) { failing = true; this.#failing++ }
      if (this.#failing === this.#options.size) this.#failQueue(error)
      report(false)
      try { await sleep(delay, undefined, { signal: this.#stopping.signal }) } catch { break }
      delay = Math.min(delay * 2, this.#options.replaceBackoffMaxMs)
    }
    report(false)
  }

  /** Every slot is failing to start: answer the waiting jobs now rather than let them hang. */
  #failQueue (err: unknown): void {
    const message = `${RUNNER_ERRORS.SF_ERR_RUNNER_NO_SANDBOX.message}: ${messageOf(err)}`
    this.#queue.drain((w) => this.#answer(w, this.#failed('infra_error', 'SF_ERR_RUNNER_NO_SANDBOX', performance.now() - w.enqueuedAt, w.call.requestId, message)))
    this.#checkIdle()
  }

  readonly #expire = (w: Waiting): void => {
    this.#answer(w, this.#failed('queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', performance.now() - w.enqueuedAt, w.call.requestId,
      `${RUNNER_ERRORS.SF_ERR_RUNNER_QUEUE_TIMEOUT.message} (queue timeout ${Math.round(w.call.queueTimeoutMs)} ms)`))
    this.#checkIdle()
  }

  #answer (w: Waiting, result: ExecResult): void {
    this.#callers.delete(w)
    w.resolve(result)
  }

  #failed (status: ExecResult['status'], code: RunnerErrorCode | string, queueMs: number, requestId: string | undefined, message?: string): ExecResult {
    const spec = (RUNNER_ERRORS as Record<string, { message: string }>)[code]
    const result = failedResult(status, code, message ?? spec?.message ?? code, { queue_ms: queueMs, runner: this.#options.runnerId })
    if (requestId !== undefined) result.request_id = requestId
    return result
  }
}
