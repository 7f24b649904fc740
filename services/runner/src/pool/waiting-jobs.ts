/**
 * The jobs of a pool that wait for a sandbox: the bounded {@link JobQueue} with its deadlines, the
 * callers' abort signals ({@link SignalGroups}), and the answers a waiting job gets without
 * running: `overloaded` past the bound, `queue_timeout` at its deadline or when its caller went
 * away, `infra_error` when the pool drains or no sandbox can start.
 */
import type { CallContext, ExecResult } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { PooledJob } from '../sandbox/contract.ts'
import { RUNNER_ERRORS, type RunnerErrorCode } from '../errors.ts'
import { poolFailure } from './job-results.ts'
import { JobQueue, type Ticket } from './queue.ts'
import { SignalGroups } from './signal-groups.ts'

/** Gets a job's result, once. */
export type Done = (result: ExecResult) => void

/** A job on its way through the pool (its deadline: `job.startBy`), in its call's context. */
export interface Call {
  readonly job: PooledJob
  readonly context: CallContext
}

/** A job waiting in the queue. */
export interface Waiting {
  call: Call
  enqueuedAt: number
  resolve: Done
  ticket: Ticket
  /** The jobs waiting under the same caller's signal, this one among them (none without a signal; see SignalGroups). */
  group: Set<Waiting> | undefined
}

/** Options of {@link WaitingJobs}. */
export interface WaitingJobsOptions {
  /** Jobs that may wait; beyond them a job is answered `overloaded`. */
  limit: number
  /** The runner's id, in every answer. */
  runnerId: string
  /** Called after jobs left without running (expired, cancelled, failed): the pool may have become idle. */
  left: () => void
}

/** The pool's waiting jobs; see the module comment. */
export class WaitingJobs {
  readonly #options: WaitingJobsOptions
  readonly #queue: JobQueue<Waiting>
  /** The waiting jobs by their caller's signal: one abort listener a signal, not one a job. */
  readonly #callers = new SignalGroups<Waiting>((jobs) => {
    this.#cancel(jobs)
  })

  constructor(options: WaitingJobsOptions) {
    this.#options = options
    this.#queue = new JobQueue<Waiting>({ limit: options.limit, onExpire: this.#expire })
  }

  /** Jobs waiting. */
  get length(): number {
    return this.#queue.length
  }

  /** The bound. */
  get limit(): number {
    return this.#queue.limit
  }

  /**
   * Puts a job in line until its `startBy`, or answers it at once: `queue_timeout` when its
   * caller already went away, `overloaded` past the bound.
   */
  add(call: Call, signal: AbortSignal | undefined, done: Done): void {
    if (signal?.aborted === true) {
      done(this.#failed(call, 'queue_timeout', 'SF_ERR_RUNNER_CANCELLED', 0))
      return
    }
    const waiting: Waiting = { call, enqueuedAt: performance.now(), resolve: done, ticket: -1, group: undefined }
    const ticket = this.#queue.push(waiting, call.job.startBy)
    if (ticket === undefined) {
      done(
        this.#failed(
          call,
          'overloaded',
          'SF_ERR_RUNNER_OVERLOADED',
          0,
          `${RUNNER_ERRORS.SF_ERR_RUNNER_OVERLOADED.message} (${this.#queue.limit} jobs waiting)`
        )
      )
      return
    }
    waiting.ticket = ticket
    if (signal !== undefined) this.#callers.add(signal, waiting)
  }

  /** The oldest job still in time, out of the line; `undefined` when none waits. */
  next(): Waiting | undefined {
    const next = this.#queue.shift()
    if (next !== undefined) this.#callers.delete(next)
    return next
  }

  /** Every slot is failing to start: the waiting jobs are answered now rather than left to hang. */
  failAll(err: unknown): void {
    const message = `${RUNNER_ERRORS.SF_ERR_RUNNER_NO_SANDBOX.message}: ${messageOf(err)}`
    this.#queue.drain((w) => {
      this.#answer(
        w,
        this.#failed(w.call, 'infra_error', 'SF_ERR_RUNNER_NO_SANDBOX', performance.now() - w.enqueuedAt, message)
      )
    })
    this.#options.left()
  }

  /** The pool closes: no job waits any more; those still waiting are answered `infra_error` (draining). */
  close(): void {
    this.#queue.close()
    this.#queue.drain((w) => {
      this.#answer(w, this.#failed(w.call, 'infra_error', 'SF_ERR_RUNNER_DRAINING', performance.now() - w.enqueuedAt))
    })
  }

  /** The caller went away: its jobs still waiting are answered, in the order they came, without running. */
  #cancel(jobs: ReadonlySet<Waiting>): void {
    for (const w of jobs) {
      if (this.#queue.cancel(w.ticket))
        w.resolve(this.#failed(w.call, 'queue_timeout', 'SF_ERR_RUNNER_CANCELLED', performance.now() - w.enqueuedAt))
    }
    this.#options.left()
  }

  readonly #expire = (w: Waiting): void => {
    this.#answer(
      w,
      this.#failed(
        w.call,
        'queue_timeout',
        'SF_ERR_RUNNER_QUEUE_TIMEOUT',
        performance.now() - w.enqueuedAt,
        `${RUNNER_ERRORS.SF_ERR_RUNNER_QUEUE_TIMEOUT.message} (queue timeout ${Math.round(w.call.job.startBy - w.enqueuedAt)} ms)`
      )
    )
    this.#options.left()
  }

  #answer(w: Waiting, result: ExecResult): void {
    this.#callers.delete(w)
    w.resolve(result)
  }

  #failed(
    call: Call,
    status: ExecResult['status'],
    code: RunnerErrorCode,
    queueMs: number,
    message?: string
  ): ExecResult {
    return poolFailure(this.#options.runnerId, call.job.request.request_id, status, code, queueMs, message)
  }
}
