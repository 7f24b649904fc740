/**
 * Routing: each call goes to the least loaded runner; a call that failed at the infrastructure
 * level (`infra_error`, `overloaded`, a connection failure), or was answered `queue_timeout`
 * while its queue budget lasts (by a runner whose own `queueTimeoutMs` is shorter), is tried
 * again on another runner while that budget lasts. A status of the user's code is never retried.
 * A judge takes the same path: its fleet verdicts are retried as those statuses are, a verdict on
 * the program never.
 *
 * The deadline of a call is its context's (`CallContext.deadline`: the gateway's `queueTimeoutMs`
 * from when the pipeline took the request): every attempt (every sub-batch) hands the runner the
 * same context, which says what is left of it; the runner starts the job by then or answers
 * `queue_timeout`, and the runner client waits for that answer (budget left + `timeout_ms` +
 * grace; a judge: its `judgeTimeBoundMs`). So every attempt is answered by the deadline + run
 * time + grace, retries included, and the answer is the runner's (`queue_timeout` with its
 * `queue_ms`, or the result), never a timeout of the gateway.
 */
import {
  budgetLeft,
  failedJudgeResult,
  failedResult,
  type CallContext,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult
} from '@sandfleet/protocol'
import { GatewayError } from '../errors.ts'
import type { BatchResultListener, RunnerClient } from './runner-client.ts'
import type { RunnerMember, RunnerSet } from './runner-set.ts'

/** Sees every result a runner gave (each attempt), with the member that gave it: metrics hang here. */
export type ResultObserver = (
  result: ExecResult,
  request: ExecRequest,
  member: RunnerMember | undefined,
  attempt: number
) => void

/** Sees every judge result a runner gave (each attempt), with the member that gave it. */
export type JudgeObserver = (
  result: JudgeResult,
  request: JudgeRequest,
  member: RunnerMember | undefined,
  attempt: number
) => void

/** Called as each judge of a batch is final, in completion order, with its index in the batch. */
export type JudgeResultListener = (index: number, result: JudgeResult) => void

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
 * Answers tried again elsewhere while the call's queue budget lasts (a `queue_timeout` that came at its end is final):
 * the fleet's statuses, which are also the fleet's verdicts of a judge.
 */
const RETRIED: ReadonlySet<string> = new Set(['infra_error', 'overloaded', 'queue_timeout'])
/** A runner's answer that it drains (its error type): the gateway stops sending to it until its next load report. */
const RUNNER_DRAINING = 'SF_ERR_RUNNER_DRAINING'
/** The runners a first attempt excludes: none (one set for every item of a batch, not one each). */
const NONE_TRIED: ReadonlySet<RunnerMember> = new Set()

/** What the router sends (an execute or a judge): how a runner is asked, and how its answers are read. */
interface CallKind<Req, Res> {
  one(client: RunnerClient, request: Req, context: CallContext): Promise<Res>
  many(
    client: RunnerClient,
    requests: Req[],
    onResult: (index: number, result: Res) => void,
    context: CallContext
  ): Promise<Res[]>
  /** The answer's status or verdict. */
  outcome(result: Res): string
  /** The answer's error type (an SF_ERR_ code), if any. */
  errorType(result: Res): string | undefined
  /** The fleet's `infra_error` for `request`, with the request's id. */
  failed(request: Req, code: string, message: string, runner?: string): Res
  /** The runner that must serve `request`, if one must. */
  pinnedOf(request: Req): string | undefined
  emit(result: Res, request: Req, member: RunnerMember | undefined, attempt: number): void
}

function noRunnerMessage(pinned?: string): string {
  return pinned === undefined
    ? 'no runner is ready to take the call'
    : `runner ${pinned} holding this session is not available`
}

function thrown(err: unknown): { code: string; message: string } {
  return {
    code: err instanceof GatewayError ? err.code : 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE',
    message: err instanceof Error ? err.message : String(err)
  }
}

/** Sends calls to runners of a {@link RunnerSet}. */
export class Router {
  readonly #set: RunnerSet
  readonly #options: RouterOptions
  readonly #observers: ResultObserver[] = []
  readonly #judgeObservers: JudgeObserver[] = []
  readonly #exec: CallKind<ExecRequest, ExecResult>
  readonly #judge: CallKind<JudgeRequest, JudgeResult>

  constructor(set: RunnerSet, options: RouterOptions) {
    this.#set = set
    this.#options = options
    this.#exec = {
      one: async (client, request, context) => await client.execute(request, context),
      many: async (client, requests, on, context) => await client.executeBatch(requests, on, context),
      outcome: (r) => r.status,
      errorType: (r) => r.error?.type,
      failed: (request, code, message, runner) => {
        const result = failedResult('infra_error', code, message, runner === undefined ? {} : { runner })
        if (request.request_id !== undefined) result.request_id = request.request_id
        return result
      },
      pinnedOf: (request) => this.#options.affinity?.(request),
      emit: (result, request, member, attempt) => {
        for (const o of this.#observers) o(result, request, member, attempt)
      }
    }
    this.#judge = {
      one: async (client, request, context) => await client.judge(request, context),
      many: async (client, requests, on, context) => await client.judgeBatch(requests, on, context),
      outcome: (r) => r.verdict,
      errorType: (r) => r.error?.type,
      failed: (request, code, message, runner) =>
        failedJudgeResult('infra_error', request.language ?? 'python', code, message, {
          ...(runner === undefined ? {} : { runner }),
          ...(request.request_id === undefined ? {} : { request_id: request.request_id })
        }),
      pinnedOf: () => undefined,
      emit: (result, request, member, attempt) => {
        for (const o of this.#judgeObservers) o(result, request, member, attempt)
      }
    }
  }

  /** Adds an observer of every runner answer to an execute (metrics, tracing). */
  observe(observer: ResultObserver): void {
    this.#observers.push(observer)
  }

  /** Adds an observer of every runner answer to a judge. */
  observeJudges(observer: JudgeObserver): void {
    this.#judgeObservers.push(observer)
  }

  /** Chooses the member for the next attempt, or undefined (then `pinned` says why). */
  #choose(pinned: string | undefined, tried: ReadonlySet<RunnerMember>): { member?: RunnerMember; pinned?: string } {
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
    return await this.#call(this.#exec, request, context, new Set())
  }

  /** Judges one program on the least loaded runner, retrying the fleet's verdicts as `execute` does. Never rejects. */
  async judge(request: JudgeRequest, context: CallContext): Promise<JudgeResult> {
    return await this.#call(this.#judge, request, context, new Set())
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
    return await this.#batch(this.#exec, requests, context, onResult)
  }

  /** Judges a batch as `executeBatch` runs one: spread by load, fleet verdicts retried, results as they are final. */
  async judgeBatch(
    requests: JudgeRequest[],
    context: CallContext,
    onResult?: JudgeResultListener
  ): Promise<JudgeResult[]> {
    return await this.#batch(this.#judge, requests, context, onResult)
  }

  async #call<Req, Res>(
    kind: CallKind<Req, Res>,
    request: Req,
    context: CallContext,
    tried: Set<RunnerMember>
  ): Promise<Res> {
    const { signal } = context
    let last: Res | undefined
    const pinnedTo = kind.pinnedOf(request)
    for (let attempt = tried.size + 1; attempt <= this.#options.maxAttempts; attempt++) {
      const { member, pinned } = this.#choose(pinnedTo, tried)
      if (member === undefined)
        return last ?? kind.failed(request, 'SF_ERR_GATEWAY_NO_RUNNERS', noRunnerMessage(pinned))
      member.outstanding++
      let result: Res
      try {
        result = await kind.one(member.client, request, context)
      } catch (err) {
        if (signal?.aborted !== true) member.up = false
        const { code, message } = thrown(err)
        result = kind.failed(request, code, message, member.id)
      } finally {
        member.outstanding--
      }
      kind.emit(result, request, member, attempt)
      if (kind.errorType(result) === RUNNER_DRAINING) member.markDraining()
      if (
        !RETRIED.has(kind.outcome(result)) ||
        pinned !== undefined ||
        signal?.aborted === true ||
        budgetLeft(context) === 0
      )
        return result
      tried.add(member)
      last = result
    }
    return last ?? kind.failed(request, 'SF_ERR_GATEWAY_NO_RUNNERS', noRunnerMessage())
  }

  async #batch<Req, Res>(
    kind: CallKind<Req, Res>,
    requests: Req[],
    context: CallContext,
    onResult: ((index: number, result: Res) => void) | undefined
  ): Promise<Res[]> {
    const { signal } = context
    const results = new Array<Res>(requests.length)
    const settle = (i: number, r: Res): void => {
      results[i] = r
      onResult?.(i, r)
    }
    const groups = new Map<RunnerMember, number[]>()
    for (let i = 0; i < requests.length; i++) {
      const { member, pinned } = this.#choose(kind.pinnedOf(requests[i]), NONE_TRIED)
      if (member === undefined) {
        settle(i, kind.failed(requests[i], 'SF_ERR_GATEWAY_NO_RUNNERS', noRunnerMessage(pinned)))
        continue
      }
      member.outstanding++ // reserve, so the next item sees this one's weight
      let group = groups.get(member)
      if (group === undefined) groups.set(member, (group = []))
      group.push(i)
    }
    const retries: Promise<void>[] = []
    const retry = (i: number, member: RunnerMember, last: Res): void => {
      const request = requests[i]
      const pinned = kind.pinnedOf(request) !== undefined
      if (pinned || signal?.aborted === true || budgetLeft(context) === 0 || this.#options.maxAttempts < 2) {
        settle(i, last)
        return
      }
      retries.push(this.#call(kind, request, context, new Set([member])).then((r) => settle(i, r)))
    }
    const sends: Promise<void>[] = []
    for (const [member, indices] of groups) {
      for (let from = 0; from < indices.length; from += this.#options.maxSubBatchItems) {
        const chunk = indices.slice(from, from + this.#options.maxSubBatchItems)
        sends.push(this.#sendChunk(kind, member, chunk, requests, settle, retry, context))
      }
    }
    await Promise.all(sends)
    await Promise.all(retries)
    return results
  }

  async #sendChunk<Req, Res>(
    kind: CallKind<Req, Res>,
    member: RunnerMember,
    chunk: number[],
    requests: Req[],
    settle: (i: number, r: Res) => void,
    retry: (i: number, member: RunnerMember, last: Res) => void,
    context: CallContext
  ): Promise<void> {
    const { signal } = context
    const answered = new Array<boolean>(chunk.length).fill(false)
    try {
      await kind.many(
        member.client,
        chunk.map((i) => requests[i]),
        (j, result) => {
          if (answered[j]) return
          answered[j] = true
          member.outstanding--
          const i = chunk[j]
          kind.emit(result, requests[i], member, 1)
          if (kind.errorType(result) === RUNNER_DRAINING) member.markDraining()
          if (RETRIED.has(kind.outcome(result))) retry(i, member, result)
          else settle(i, result)
        },
        context
      )
    } catch (err) {
      if (signal?.aborted !== true) member.up = false
      const { code, message } = thrown(err)
      for (let j = 0; j < chunk.length; j++) {
        if (answered[j]) continue
        answered[j] = true
        member.outstanding--
        const i = chunk[j]
        const result = kind.failed(requests[i], code, message, member.id)
        kind.emit(result, requests[i], member, 1)
        retry(i, member, result)
      }
    }
  }
}
