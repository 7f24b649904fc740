/**
 * A pool of pre-warmed sandboxes of one driver: it admits jobs, hands each to a sandbox and
 * answers with its result. The parts, one file each:
 *
 * - admission (here): a job goes straight to an idle sandbox when one is free and nobody is
 *   waiting; otherwise it waits ({@link WaitingJobs}: bounded → `overloaded`; past the
 *   `startBy` its call was prepared with, `requests/prepared-call.ts` → `queue_timeout`, never
 *   run). When every slot is failing to start, the waiting jobs are answered `infra_error` at
 *   once instead of hanging, and so is every new job until a sandbox comes up.
 * - running (here): a sandbox is replaced after an outcome with `retire` (counted under its
 *   `retire_reason`), after a rejected execute (that job is answered `infra_error`: the fleet's
 *   fault) and after `maxJobsPerSandbox` jobs; after any other outcome, `timeout`, `memory` and
 *   `killed` included, it takes the next job. Its result is built by `job-results.ts`. Each job's hard deadline
 *   ({@link JobDeadline}) is here: a sandbox that has not answered by then gets its job
 *   answered `timeout` for it and is retired (`hung`), its close being the hard kill.
 * - the sandboxes' lives ({@link SlotSupervisor}): start, replacement in the background (never
 *   blocking the other slots), retries of a failed start with exponential backoff, close.
 * - drain (here, {@link Pool.close}): new jobs refused, the rest given `drainTimeoutMs` to finish.
 *
 * Statistics (warm, busy, starting, queued, replacements, time to replace) are kept once here for
 * every driver.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { GRACES, NO_CALL_CONTEXT, type CallContext, type ExecResult, type Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { Driver, PooledJob, RunOutcome } from '../sandbox/contract.ts'
import { failedOutcome } from '../sandbox/failed-outcome.ts'
import { codeOf, RUNNER_ERRORS, RunnerError } from '../errors.ts'
import { silentLogger, type Logger } from '../logger.ts'
import { JobDeadline } from './job-deadline.ts'
import { outcomeResult, poolFailure, sandboxFailure } from './job-results.ts'
import { SlotSupervisor, type PoolEvents, type ReplaceReason, type Slot } from './slot-supervisor.ts'
import { WaitingJobs, type Call, type Done } from './waiting-jobs.ts'

export type { PoolEvents, ReplaceReason } from './slot-supervisor.ts'

/** A job in a sandbox: what its pool needs to answer it. */
interface Running {
  slot: Slot
  call: Call
  queueMs: number
  done: Done
}

/** Lifecycle of a pool. */
export type PoolState = 'starting' | 'ready' | 'draining' | 'closed'

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
  /** First retry delay for a sandbox that failed to start; doubles up to `replaceBackoffMaxMs`. */
  replaceBackoffMs: number
  replaceBackoffMaxMs: number
  /**
   * Beyond a job's `timeout_ms` and its driver's `stopMs`, how long its sandbox may take to
   * answer before the pool answers `timeout` and retires it (the runner's `graceMs`; default
   * `GRACES.sandboxMs`).
   */
  graceMs?: number
  logger?: Logger
  events?: PoolEvents
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

/** N pre-warmed sandboxes of one driver; see the module comment. */
export class Pool {
  readonly language: Language
  readonly driver: Driver
  readonly #options: PoolOptions
  readonly #log: Logger
  readonly #waiting: WaitingJobs
  readonly #slots: SlotSupervisor
  readonly #idle: Slot[] = []
  #state: PoolState = 'starting'
  #busy = 0
  #jobs = 0
  #closing: Promise<void> | undefined
  #onIdle: (() => void) | undefined
  /** Jobs already run once more on a fresh sandbox after theirs was found tampered with. */
  readonly #rerun = new WeakSet<PooledJob>()
  /** Past `timeout_ms`, when a job's hard deadline falls: the driver's stop time and the grace. */
  readonly #overrunMs: number

  constructor(options: PoolOptions) {
    this.#options = options
    this.language = options.language
    this.driver = options.driver
    this.#log = options.logger ?? silentLogger
    this.#overrunMs = (options.driver.stopMs ?? 0) + (options.graceMs ?? GRACES.sandboxMs)
    this.#waiting = new WaitingJobs({
      limit: options.maxQueuedJobs,
      runnerId: options.runnerId,
      left: () => {
        this.#checkIdle()
      }
    })
    this.#slots = new SlotSupervisor({
      driver: options.driver,
      language: options.language,
      size: options.size,
      replaceBackoffMs: options.replaceBackoffMs,
      replaceBackoffMaxMs: options.replaceBackoffMaxMs,
      logger: this.#log,
      events: options.events,
      ready: (slot) => {
        this.#release(slot)
      },
      lost: (slot) => {
        this.#lost(slot)
      },
      allFailing: (err) => {
        this.#waiting.failAll(err)
      }
    })
  }

  /** The pool's lifecycle state. */
  get state(): PoolState {
    return this.#state
  }

  /**
   * Starts every sandbox. Resolves once each slot's first attempt finished and at least one
   * sandbox is ready (failed slots keep retrying in the background); rejects, closing the pool,
   * when none could start.
   */
  async start(): Promise<void> {
    const started = await this.#slots.startAll()
    if (!started.includes(true)) {
      const cause = this.#slots.lastStartError
      await this.close(0)
      throw new RunnerError(
        'SF_ERR_RUNNER_POOL_START',
        `no ${this.driver.name} sandbox could be started: ${messageOf(cause)}`,
        { cause }
      )
    }
    if (this.#state === 'starting') this.#state = 'ready'
  }

  /**
   * Runs one job in its call's `context` (its signal: a caller that went away takes it out of
   * the queue) and resolves with its full result; never rejects. A job that cannot start by its
   * `startBy` is answered `queue_timeout` and never runs.
   */
  run(job: PooledJob, context: CallContext = NO_CALL_CONTEXT): Promise<ExecResult> {
    return new Promise((resolve) => {
      this.submit(job, context, resolve)
    })
  }

  /**
   * {@link run} without a promise: `done` is called once with the full result, synchronously
   * when the job is answered at once (`overloaded`, draining, cancelled). For callers that hand
   * many jobs in at once (a batch), where a promise and its reactions per job cost more than the
   * queueing itself.
   */
  submit(job: PooledJob, context: CallContext, done: (result: ExecResult) => void): void {
    this.#admit({ job, context }, context.signal, done)
  }

  /** Admission: a job runs now, waits, or is answered at once. */
  #admit(call: Call, signal: AbortSignal | undefined, done: Done): void {
    if (this.#state === 'draining' || this.#state === 'closed') {
      done(poolFailure(this.#options.runnerId, call.job.request.request_id, 'infra_error', 'SF_ERR_RUNNER_DRAINING', 0))
      return
    }
    if (this.#idle.length > 0 && this.#waiting.length === 0) {
      this.#runOn(this.#takeIdle(call.job.tenant), call, 0, done)
      return
    }
    if (this.#slots.allFailing) {
      done(
        poolFailure(
          this.#options.runnerId,
          call.job.request.request_id,
          'infra_error',
          'SF_ERR_RUNNER_NO_SANDBOX',
          0,
          `${RUNNER_ERRORS.SF_ERR_RUNNER_NO_SANDBOX.message}: ${messageOf(this.#slots.lastStartError)}`
        )
      )
      return
    }
    this.#waiting.add(call, signal, done)
  }

  /** A snapshot of the counters (cheap; read on every load report and metrics scrape). */
  stats(): PoolStats {
    const slots = this.#slots
    return {
      language: this.language,
      driver: this.driver.name,
      state: this.#state,
      size: this.#options.size,
      warm: this.#idle.length,
      busy: this.#busy,
      starting: slots.starting,
      failing: slots.failing,
      queued: this.#waiting.length,
      queueLimit: this.#waiting.limit,
      replacements: slots.replacements,
      startFailures: slots.startFailures,
      lastReplaceMs: slots.lastReplaceMs,
      jobs: this.#jobs
    }
  }

  /**
   * Drains, then closes every sandbox. New jobs are answered `infra_error` at once; queued and
   * running jobs may finish for `drainTimeoutMs`; whatever is still queued then is answered
   * `infra_error`, and running jobs are answered as their sandbox closes. Idempotent.
   */
  close(drainTimeoutMs = 0): Promise<void> {
    this.#closing ??= this.#close(drainTimeoutMs)
    return this.#closing
  }

  async #close(drainTimeoutMs: number): Promise<void> {
    this.#state = 'draining'
    if (drainTimeoutMs > 0 && (this.#busy > 0 || this.#waiting.length > 0)) {
      const idle = new Promise<void>((resolve) => {
        this.#onIdle = resolve
      })
      const timeout = sleep(drainTimeoutMs, undefined, { ref: false })
      await Promise.race([idle, timeout])
      this.#onIdle = undefined
    }
    this.#state = 'closed'
    this.#slots.stop()
    this.#waiting.close()
    this.#idle.length = 0
    await this.#slots.closeAll()
  }

  /**
   * An idle sandbox for a job of `tenant`: the last one idle that ran that tenant's job, else the
   * last one idle (a sandbox reuses a process only for one tenant's jobs: keeping tenants on
   * their sandboxes keeps those processes reused).
   */
  #takeIdle(tenant: string | undefined): Slot {
    const idle = this.#idle
    for (let i = idle.length - 1; i >= 0; i--) {
      if (idle[i].tenant === tenant) return idle.splice(i, 1)[0]
    }
    return idle.pop() as Slot
  }

  /** Hands one job to a sandbox under its hard deadline; `done` gets the full result. */
  #runOn(slot: Slot, call: Call, queueMs: number, done: Done): void {
    this.#busy++
    this.#jobs++
    slot.jobs++
    slot.tenant = call.job.tenant
    const running: Running = { slot, call, queueMs, done }
    const deadline = new JobDeadline(running, call.job, this.#overrunMs, this.#expired)
    let pending: Promise<RunOutcome>
    try {
      pending = slot.sandbox.execute(call.job, deadline)
    } catch (err) {
      pending = Promise.reject(err)
    }
    // No named closure per job: under tsx each one costs a defineProperty of its name.
    pending.then(
      (outcome) => {
        if (deadline.answer()) this.#finish(slot, queueMs, call.job.request.request_id, done, outcome, undefined)
      },
      (err: unknown) => {
        if (deadline.answer()) this.#rejected(slot, call, queueMs, done, err)
      }
    )
  }

  /**
   * A job's hard deadline passed with no answer from its sandbox: answered `timeout`, the sandbox retired (its close
   * kills it).
   */
  readonly #expired = ({ slot, call, queueMs, done }: Running, deadline: JobDeadline<Running>): void => {
    this.#busy--
    this.#log.warn(
      {
        sandbox: slot.sandbox.id,
        reqId: call.context.requestId,
        timeoutMs: call.job.request.timeout_ms,
        overrunMs: this.#overrunMs
      },
      "sandbox did not answer by its job's hard deadline; replacing it"
    )
    const outcome = failedOutcome('timeout', 'Timeout', deadline.describe(), {
      durationMs: performance.now() - deadline.handedAt
    })
    const result = outcomeResult(this.#options.runnerId, call.job.request.request_id, slot.sandbox.id, queueMs, outcome)
    this.#retire(slot, 'hung')
    done(result)
  }

  /**
   * A sandbox's execute rejected: its job is answered `infra_error`, or, when the sandbox was found tampered with
   * before the job ran, run once more elsewhere.
   */
  #rejected(slot: Slot, call: Call, queueMs: number, done: Done, err: unknown): void {
    if (
      codeOf(err, '') === 'SF_ERR_RUNNER_SANDBOX_TAMPERED' &&
      !this.#rerun.has(call.job) &&
      this.#state !== 'closed'
    ) {
      // The job never ran: an earlier job had changed the sandbox's processes. Once more, on
      // another sandbox, by the same `startBy` (its caller waits no longer).
      this.#rerun.add(call.job)
      this.#busy--
      this.#retire(slot, 'tampered')
      this.#admit(call, undefined, done)
      return
    }
    this.#finish(slot, queueMs, call.job.request.request_id, done, undefined, err)
  }

  #finish(
    slot: Slot,
    queueMs: number,
    requestId: string | undefined,
    done: Done,
    outcome: RunOutcome | undefined,
    err: unknown
  ): void {
    this.#busy--
    const { runnerId, maxJobsPerSandbox: max } = this.#options
    let result: ExecResult
    if (outcome !== undefined) {
      result = outcomeResult(runnerId, requestId, slot.sandbox.id, queueMs, outcome)
    } else {
      if (this.#state !== 'closed')
        this.#log.warn({ sandbox: slot.sandbox.id, err: messageOf(err) }, 'sandbox execute failed; replacing it')
      result = sandboxFailure(
        runnerId,
        requestId,
        slot.sandbox.id,
        queueMs,
        codeOf(err, 'SF_ERR_RUNNER_SANDBOX_FAILED'),
        messageOf(err)
      )
    }
    if (err !== undefined) this.#retire(slot, 'crash')
    else if (outcome?.retire === true) this.#retire(slot, outcome.retire_reason ?? 'other')
    else if (max > 0 && slot.jobs >= max) this.#retire(slot, 'max_jobs')
    else this.#release(slot)
    done(result)
  }

  /** A free sandbox takes the next waiting job, or goes idle. */
  #release(slot: Slot): void {
    if (this.#state === 'closed') return
    const next = this.#waiting.next()
    if (next !== undefined) {
      this.#runOn(slot, next.call, performance.now() - next.enqueuedAt, next.resolve)
      return
    }
    this.#idle.push(slot)
    this.#checkIdle()
  }

  /** Out of service, replaced in the background. */
  #retire(slot: Slot, reason: ReplaceReason): void {
    this.#slots.retire(slot, reason)
    this.#checkIdle()
  }

  /** An idle sandbox died on its own: out of the idle list and replaced (a busy one is answered by its job). */
  #lost(slot: Slot): void {
    const i = this.#idle.indexOf(slot)
    if (i === -1 || this.#state === 'closed') return
    this.#idle.splice(i, 1)
    this.#log.warn({ sandbox: slot.sandbox.id }, 'idle sandbox died; replacing it')
    this.#retire(slot, 'crash')
  }

  /** While draining: resolves the drain's wait once nothing runs or waits. */
  #checkIdle(): void {
    if (this.#onIdle !== undefined && this.#busy === 0 && this.#waiting.length === 0) this.#onIdle()
  }
}
