/**
 * Routing: each call goes to the least loaded runner; a call that failed at the infrastructure
 * level (`infra_error`, `overloaded`, a connection failure), or was answered `queue_timeout`
 * while its queue budget lasts (by a runner whose own `queueTimeoutMs` is shorter), is tried
 * again on another runner while that budget lasts. A status of the user's code is never retried.
 *
 * The deadline of a call is its context's (`CallContext.deadline`: the gateway's `queueTimeoutMs`
 * from when the pipeline took the request): every attempt (every sub-batch) hands the runner the
 * same context, which says what is left of it; the runner starts the job by then or answers
 * `queue_timeout`, and the runner client waits for that answer (budget left + `timeout_ms` +
 * grace). So every attempt is answered by the deadline + `timeout_ms` + grace, retries
 * included, and the answer is the runner's (`queue_timeout` with its `queue_ms`, or the
 * result), never a timeout of the gateway.
 */
import { budgetLeft, failedResult, type CallContext, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import { GatewayError } from '../errors.ts'
import type { BatchResultListener } from './runner-client.ts'
import type { RunnerMember, RunnerSet } from './runner-set.ts'

/** Sees every result a runner gave (each attempt), with the member that gave it: metrics hang here. */
export type ResultObserver = (
  result: ExecResult,
  request: ExecRequest,
  member: RunnerMember | undefined,
  attempt: number
) => void

/**
 * Session affinity seam: names the runner that must serve a request (the one holding its
 * session). A pinned call is never moved to another runner.
 */
export type AffinityHook = (request: ExecRequest) => string | undefined

/** Options of {@link Router}. */
export interface RouterOptions {
  /** Runners tried for one call, at most. */
  maxAttempts: number
  /** Most items of a batch sent to one runner in one request. */
  maxSubBatchItems: number
  affinity?: AffinityHook
}

/**
 * Answers tried again elsewhere while the call's queue budget lasts (a `queue_timeout` that came at its end is final).
 */
const RETRIED: ReadonlySet<string> = new Set(['infra_error', 'overloaded', 'queue_timeout'])
/** A runner's answer that it drains (its error type): the gateway stops sending to it until its next load report. */
const RUNNER_DRAINING = 'SF_ERR_RUNNER_DRAINING'
/** The runners a first attempt excludes: none (one set for every item of a batch, not one each). */
const NONE_TRIED: ReadonlySet<RunnerMember> = new Set()

function noRunner(request: ExecRequest, pinned?: string): ExecResult {
  const message =
    pinned === undefined
      ? 'no runner is ready to take the call'
      : `runner ${pinned} holding this session is not available`
  return withId(failedResult('infra_error', 'SF_ERR_GATEWAY_NO_RUNNERS', message), request)
}

function withId(result: ExecResult, request: ExecRequest): ExecResult {
  if (request.request_id !== undefined && result.request_id === undefined) result.request_id = request.request_id
  return result
}

function unreachableResult(err: unknown, member: RunnerMember, request: ExecRequest): ExecResult {
  const code = err instanceof GatewayError ? err.code : 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE'
  const message = err instanceof Error ? err.message : String(err)
  return withId(failedResult('infra_error', code, message, { runner: member.id }), request)
}

/** Sends calls to runners of a {@link RunnerSet}. */
export class Router {
  readonly #set: RunnerSet
  readonly #options: RouterOptions
  readonly #observers: ResultObserver[] = []

  constructor(set: RunnerSet, options: RouterOptions) {
    this.#set = set
    this.#options = options
  }

  /** Adds an observer of every runner answer (metrics, tracing). */
  observe(observer: ResultObserver): void {
    this.#observers.push(observer)
  }

  #emit(result: ExecResult, request: ExecRequest, member: RunnerMember | undefined, attempt: number): void {
    for (const o of this.#observers) o(result, request, member, attempt)
  }

  /** Chooses the member for the next attempt, or undefined (then `pinned` says why). */
  #choose(request: ExecRequest, tried: ReadonlySet<RunnerMember>): { member?: RunnerMember; pinned?: string } {
    const pinned = this.#options.affinity?.(request)
    if (pinned !== undefined) {
      const member = this.#set.byId(pinned)
      return member === undefined || tried.has(member) ? { pinned } : { member, pinned }
    }
    const member = this.#set.pick(tried)
    return member === undefined ? {} : { member }
  }

  /**
   * Runs one call in `context`, retrying infrastructure failures on other runners while its
   * deadline lasts. Never rejects.
   */
  async execute(request: ExecRequest, context: CallContext): Promise<ExecResult> {
    return await this.#attempts(request, context, new Set())
  }

  /** {@link execute}, the runners in `tried` excluded (they answered it already). */
  async #attempts(request: ExecRequest, context: CallContext, tried: Set<RunnerMember>): Promise<ExecResult> {
    const { signal } = context
    let last: ExecResult | undefined
    for (let attempt = tried.size + 1; attempt <= this.#options.maxAttempts; attempt++) {
      const { member, pinned } = this.#choose(request, tried)
      if (member === undefined) return last ?? noRunner(request, pinned)
      member.outstanding++
      let result: ExecResult
      try {
        result = await member.client.execute(request, context)
      } catch (err) {
        if (signal?.aborted !== true) member.up = false
        result = unreachableResult(err, member, request)
      } finally {
        member.outstanding--
      }
      this.#emit(result, request, member, attempt)
      if (result.error?.type === RUNNER_DRAINING) member.markDraining()
      if (!RETRIED.has(result.status) || pinned !== undefined || signal?.aborted === true || budgetLeft(context) === 0)
        return result
      tried.add(member)
      last = result
    }
    return last ?? noRunner(request)
  }

  /**
   * Runs a batch: items are spread over runners by load (one sub-batch per runner and up to
   * `maxSubBatchItems` items), each result is handed to `onResult` as soon as it is final, and
   * items that failed at the infrastructure level are retried one by one elsewhere, all by the
   * deadline of `context`. Resolves with every result in request order. Never rejects.
   */
  async executeBatch(
    requests: ExecRequest[],
    context: CallContext,
    onResult?: BatchResultListener
  ): Promise<ExecResult[]> {
    const { signal } = context
    const results = new Array<ExecResult>(requests.length)
    const settle = (i: number, r: ExecResult): void => {
      results[i] = r
      onResult?.(i, r)
    }
    const groups = new Map<RunnerMember, number[]>()
    for (let i = 0; i < requests.length; i++) {
      const { member, pinned } = this.#choose(requests[i], NONE_TRIED)
      if (member === undefined) {
        settle(i, noRunner(requests[i], pinned))
        continue
      }
      member.outstanding++ // reserve, so the next item sees this one's weight
      let group = groups.get(member)
      if (group === undefined) groups.set(member, (group = []))
      group.push(i)
    }
    const retries: Promise<void>[] = []
    const retry = (i: number, member: RunnerMember, last: ExecResult): void => {
      const request = requests[i]
      const pinned = this.#options.affinity?.(request) !== undefined
      if (pinned || signal?.aborted === true || budgetLeft(context) === 0 || this.#options.maxAttempts < 2) {
        settle(i, last)
        return
      }
      retries.push(this.#attempts(request, context, new Set([member])).then((r) => settle(i, r)))
    }
    const sends: Promise<void>[] = []
    for (const [member, indices] of groups) {
      for (let from = 0; from < indices.length; from += this.#options.maxSubBatchItems) {
        const chunk = indices.slice(from, from + this.#options.maxSubBatchItems)
        sends.push(this.#sendChunk(member, chunk, requests, settle, retry, context))
      }
    }
    await Promise.all(sends)
    await Promise.all(retries)
    return results
  }

  async #sendChunk(
    member: RunnerMember,
    chunk: number[],
    requests: ExecRequest[],
    settle: (i: number, r: ExecResult) => void,
    retry: (i: number, member: RunnerMember, last: ExecResult) => void,
    context: CallContext
  ): Promise<void> {
    const { signal } = context
    const answered = new Array<boolean>(chunk.length).fill(false)
    try {
      await member.client.executeBatch(
        chunk.map((i) => requests[i]),
        (j, result) => {
          if (answered[j]) return
          answered[j] = true
          member.outstanding--
          const i = chunk[j]
          this.#emit(result, requests[i], member, 1)
          if (result.error?.type === RUNNER_DRAINING) member.markDraining()
          if (RETRIED.has(result.status)) retry(i, member, result)
          else settle(i, result)
        },
        context
      )
    } catch (err) {
      if (signal?.aborted !== true) member.up = false
      for (let j = 0; j < chunk.length; j++) {
        if (answered[j]) continue
        answered[j] = true
        member.outstanding--
        const i = chunk[j]
        const result = unreachableResult(err, member, requests[i])
        this.#emit(result, requests[i], member, 1)
        retry(i, member, result)
      }
    }
  }
}
