/**
 * Routing: each call goes to the least loaded runner; a call that failed at the infrastructure
 * level and surely did not run (`overloaded`, an `infra_error` with `maybe_ran: false`, a
 * connection never made), or was answered `queue_timeout` while its queue budget lasts (by a
 * runner whose own `queueTimeoutMs` is shorter), is tried again on another runner while that
 * budget lasts; so is one whose runner died under it (`unanswered.ts`). One that may have run
 * on a runner that may still live (`maybe_ran: true`: it stalled, or the runner went silent) is
 * answered as it is, never run a second time. A status of the user's code is never retried.
 * A judge takes the same path: its fleet verdicts are retried as those statuses are (where its
 * program surely did not run), a verdict on the program never.
 *
 * Every execute has a `request_id` (the caller's, or one given here and returned in its result),
 * and a call whose id this gateway sent lately, or that names the runner that had it (the caller's
 * retry: `GATEWAY_HEADERS.runner`), goes to that runner first while it is up (`call-places.ts`):
 * the runner answers it from its first run instead of running it again. A judge keeps the id its
 * caller gave (the runners remember no judges).
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
  judgeMayHaveRun,
  mayHaveRun,
  withSignal,
  type CallContext,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeVerdict
} from '@sandfleet/protocol'
import type { BatchResultListener, RunnerClient } from './runner-client.ts'
import type { RunnerMember, RunnerSet } from './runner-set.ts'
import { CallPlaces, identified } from './call-places.ts'
import { unanswered } from './unanswered.ts'

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
 * Answers tried again elsewhere while the call's queue budget lasts (a `queue_timeout` that came at its end is final),
 * when the code surely did not run: the fleet's statuses, which are also the fleet's verdicts of a judge.
 */
const RETRIED: ReadonlySet<string> = new Set(['infra_error', 'overloaded', 'queue_timeout'])

/** The call's context, watching the member's silence too: a call on it is aborted when it is found silent. */
function watching(context: CallContext, member: RunnerMember): CallContext {
  return withSignal(context, member.silenced)
}
/** A runner's answer that it drains (its error type): the gateway stops sending to it until its next load report. */
const RUNNER_DRAINING = 'SF_ERR_RUNNER_DRAINING'
/** The runners a first attempt excludes: none (one set for every item of a batch, not one each). */
const NONE_TRIED: ReadonlySet<RunnerMember> = new Set()

/** What the router sends (an execute or a judge): how a runner is asked, and how its answers are read. */
interface CallKind<Req extends { request_id?: string }, Res extends { request_id?: string }> {
  one(client: RunnerClient, request: Req, context: CallContext): Promise<Res>
  many(
    client: RunnerClient,
    requests: Req[],
    onResult: (index: number, result: Res) => void,
    context: CallContext
  ): Promise<Res[]>
  /** Whether a runner's answer is tried elsewhere: a fleet status (verdict) whose code surely did not run. */
  retried(result: Res): boolean
  /** The answer's error type (an SF_ERR_ code), if any. */
  errorType(result: Res): string | undefined
  /** The fleet's answer made of an execute's failed result (no runner, none answered). */
  of(failed: ExecResult, request: Req): Res
  /** The runner that must serve `request`, if one must. */
  pinnedOf(request: Req): string | undefined
  /** `request` as routed: an execute with its id (its own, or a new one); a judge as given. */
  identified(request: Req): Req
  /** Where `request` went lately (an execute's place: its runner remembers it), if anywhere. */
  where(request: Req, context: CallContext): string | undefined
  /** `request` was sent to the runner `runner`. */
  sent(request: Req, context: CallContext, runner: string): void
  emit(result: Res, request: Req, member: RunnerMember | undefined, attempt: number): void
}

function noRunner(pinned?: string): ExecResult {
  const message =
    pinned === undefined
      ? 'no runner is ready to take the call'
      : `runner ${pinned} holding this session is not available`
  return failedResult('infra_error', 'SF_ERR_GATEWAY_NO_RUNNERS', message)
}

function withId<Res extends { request_id?: string }>(result: Res, request: { request_id?: string }): Res {
  if (request.request_id !== undefined && result.request_id === undefined) result.request_id = request.request_id
  return result
}

/** Sends calls to runners of a {@link RunnerSet}. */
export class Router {
  readonly #set: RunnerSet
  readonly #options: RouterOptions
  readonly #observers: ResultObserver[] = []
  readonly #judgeObservers: JudgeObserver[] = []
  readonly #places = new CallPlaces()
  readonly #exec: CallKind<ExecRequest, ExecResult>
  readonly #judge: CallKind<JudgeRequest, JudgeResult>

  constructor(set: RunnerSet, options: RouterOptions) {
    this.#set = set
    this.#options = options
    this.#exec = {
      one: async (client, request, context) => await client.execute(request, context),
      many: async (client, requests, on, context) => await client.executeBatch(requests, on, context),
      retried: (r) => RETRIED.has(r.status) && !mayHaveRun(r),
      errorType: (r) => r.error?.type,
      of: (failed, request) => withId(failed, request),
      pinnedOf: (request) => this.#options.affinity?.(request),
      identified,
      where: (request, context) => this.#places.where(request, context),
      sent: (request, context, runner) => {
        this.#places.sent(request, context, runner)
      },
      emit: (result, request, member, attempt) => {
        for (const o of this.#observers) o(result, request, member, attempt)
      }
    }
    this.#judge = {
      one: async (client, request, context) => await client.judge(request, context),
      many: async (client, requests, on, context) => await client.judgeBatch(requests, on, context),
      retried: (r) => RETRIED.has(r.verdict) && !judgeMayHaveRun(r),
      errorType: (r) => r.error?.type,
      of: (failed, request) => {
        const extra: Partial<JudgeResult> = {}
        if (failed.runner !== '') extra.runner = failed.runner
        if (failed.maybe_ran !== undefined) extra.maybe_ran = failed.maybe_ran
        const verdict = (RETRIED.has(failed.status) ? failed.status : 'infra_error') as JudgeVerdict
        const result = failedJudgeResult(
          verdict,
          request.language ?? 'python',
          failed.error?.type ?? 'SF_ERR_GATEWAY_RUNNER_UNREACHABLE',
          failed.error?.message ?? '',
          extra
        )
        return withId(result, request)
      },
      pinnedOf: () => undefined,
      identified: (request) => request,
      where: () => undefined,
      sent: () => {},
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

  /**
   * Chooses the member for the next attempt, or undefined (then `pinned` says why): the one holding its session, else
   * the one that had the call (`preferred`) while it is up and untried, else the least loaded.
   */
  #choose(
    pinned: string | undefined,
    tried: ReadonlySet<RunnerMember>,
    preferred?: string
  ): { member?: RunnerMember; pinned?: string } {
    if (pinned !== undefined) {
      const member = this.#set.byId(pinned)
      return member === undefined || tried.has(member) ? { pinned } : { member, pinned }
    }
    const had = preferred === undefined ? undefined : this.#set.byId(preferred)
    if (had !== undefined && !tried.has(had)) return { member: had }
    const member = this.#set.pick(tried)
    return member === undefined ? {} : { member }
  }

  /**
   * Runs one call in `context`, retrying infrastructure failures on other runners while its
   * deadline lasts; `runner`, the runner the caller says had it (a retry's). Never rejects.
   */
  async execute(request: ExecRequest, context: CallContext, runner?: string): Promise<ExecResult> {
    return await this.#one(this.#exec, request, context, runner)
  }

  /** Judges one program on the least loaded runner, retrying the fleet's verdicts as `execute` does. Never rejects. */
  async judge(request: JudgeRequest, context: CallContext): Promise<JudgeResult> {
    return await this.#one(this.#judge, request, context)
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

  async #one<Req extends { request_id?: string }, Res extends { request_id?: string }>(
    kind: CallKind<Req, Res>,
    request: Req,
    context: CallContext,
    runner?: string
  ): Promise<Res> {
    const call = kind.identified(request)
    return withId(await this.#attempts(kind, call, context, new Set(), runner ?? kind.where(call, context)), call)
  }

  /** One call, the runners in `tried` excluded (they answered it already). */
  async #attempts<Req extends { request_id?: string }, Res extends { request_id?: string }>(
    kind: CallKind<Req, Res>,
    request: Req,
    context: CallContext,
    tried: Set<RunnerMember>,
    preferred?: string
  ): Promise<Res> {
    const { signal } = context
    let last: Res | undefined
    const pinnedTo = kind.pinnedOf(request)
    for (let attempt = tried.size + 1; attempt <= this.#options.maxAttempts; attempt++) {
      const { member, pinned } = this.#choose(pinnedTo, tried, preferred)
      if (member === undefined) return last ?? kind.of(noRunner(pinned), request)
      kind.sent(request, context, member.id)
      member.outstanding++
      let result: Res
      let again: boolean
      try {
        result = await kind.one(member.client, request, watching(context, member))
        member.answered()
        again = kind.retried(result)
      } catch (err) {
        if (signal?.aborted !== true) member.up = false
        const lost = unanswered(err, member, request)
        result = kind.of(lost.result, request)
        again = lost.retry
      } finally {
        member.outstanding--
      }
      kind.emit(result, request, member, attempt)
      if (kind.errorType(result) === RUNNER_DRAINING) member.markDraining()
      if (!again || pinned !== undefined || signal?.aborted === true || budgetLeft(context) === 0) return result
      tried.add(member)
      last = result
    }
    return last ?? kind.of(noRunner(), request)
  }

  async #batch<Req extends { request_id?: string }, Res extends { request_id?: string }>(
    kind: CallKind<Req, Res>,
    requests: Req[],
    context: CallContext,
    onResult: ((index: number, result: Res) => void) | undefined
  ): Promise<Res[]> {
    const { signal } = context
    requests = requests.map((r) => kind.identified(r))
    const results = new Array<Res>(requests.length)
    const settle = (i: number, r: Res): void => {
      results[i] = withId(r, requests[i])
      onResult?.(i, results[i])
    }
    const groups = new Map<RunnerMember, number[]>()
    for (let i = 0; i < requests.length; i++) {
      const { member, pinned } = this.#choose(kind.pinnedOf(requests[i]), NONE_TRIED, kind.where(requests[i], context))
      if (member === undefined) {
        settle(i, kind.of(noRunner(pinned), requests[i]))
        continue
      }
      kind.sent(requests[i], context, member.id)
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
      retries.push(this.#attempts(kind, request, context, new Set([member])).then((r) => settle(i, r)))
    }
    const sends: Promise<void>[] = []
    for (const [member, indices] of groups) {
      for (let from = 0; from < indices.length; from += this.#options.maxSubBatchItems) {
        const chunk = indices.slice(from, from + this.#options.maxSubBatchItems)
        sends.push(
          this.#sendChunk(kind, member, chunk, requests, settle, retry, watching(context, member), context.signal)
        )
      }
    }
    await Promise.all(sends)
    await Promise.all(retries)
    return results
  }

  async #sendChunk<Req extends { request_id?: string }, Res extends { request_id?: string }>(
    kind: CallKind<Req, Res>,
    member: RunnerMember,
    chunk: number[],
    requests: Req[],
    settle: (i: number, r: Res) => void,
    retry: (i: number, member: RunnerMember, last: Res) => void,
    context: CallContext,
    signal: AbortSignal | undefined
  ): Promise<void> {
    const answered = new Array<boolean>(chunk.length).fill(false)
    try {
      await kind.many(
        member.client,
        chunk.map((i) => requests[i]),
        (j, result) => {
          member.answered()
          if (answered[j]) return
          answered[j] = true
          member.outstanding--
          const i = chunk[j]
          kind.emit(result, requests[i], member, 1)
          if (kind.errorType(result) === RUNNER_DRAINING) member.markDraining()
          if (kind.retried(result)) retry(i, member, result)
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
        const lost = unanswered(err, member, requests[i])
        const result = kind.of(lost.result, requests[i])
        kind.emit(result, requests[i], member, 1)
        if (lost.retry) retry(i, member, result)
        else settle(i, result)
      }
    }
  }
}
