/**
 * Judging through the fleet (`POST /v1/judge`, `/v1/judge/batch`): a program against its tests, answered with a
 * {@link JudgeResult} whose `verdict` says what happened. The fleet's verdicts (`overloaded`, `queue_timeout`,
 * `infra_error`, which HTTP 429/503 and dropped connections map to) are retried with backoff within the call's
 * deadline (its `judgeTimeBoundMs` plus the client's slack), never a verdict on the program; and, unless told
 * (`retryMaybeRan`), only those whose program surely did not run (`judgeMayHaveRun`), as the client's executes are.
 * A request the fleet refuses is `invalid_request` with the field in its message.
 */
import {
  LIMITS,
  failedJudgeResult,
  isRetriableVerdict,
  judgeMayHaveRun,
  judgeTimeBoundMs,
  JUDGE_VERDICTS,
  type JudgeRequest,
  type JudgeResult,
  type JudgeVerdict
} from '@sandfleet/protocol'
import { backoffDelayMs, sleep, type RetryPolicy } from './backoff.ts'
import type { CallOptions } from './call-options.ts'
import { CLIENT_ERROR_CODES, abortedError } from './errors.ts'
import type { RetryStats } from './retry.ts'
import { resultFromError, resultFromFailure, type JsonAnswer, type Transport } from './transport.ts'

const verdicts: ReadonlySet<string> = new Set(JUDGE_VERDICTS)

/** True when `body` looks like a {@link JudgeResult} (a verdict of the closed set, its tests). */
export function isJudgeResult(body: unknown): body is JudgeResult {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  return typeof b.verdict === 'string' && verdicts.has(b.verdict) && Array.isArray(b.tests)
}

/** The judge result standing for an answer that holds none: an ErrorBody's status, or the fleet's `infra_error`. */
function failedJudge(language: string, answer: JsonAnswer | undefined, err: unknown, deadlinePassed: boolean) {
  const r =
    answer === undefined || answer.httpStatus === 0
      ? resultFromFailure(err, deadlinePassed)
      : answer.httpStatus >= 300
        ? resultFromError(answer.httpStatus, answer.body)
        : resultFromFailure(new Error('the fleet answered 2xx with a body that is not a JudgeResult'), false)
  const verdict = (verdicts.has(r.status) ? r.status : 'infra_error') as JudgeVerdict
  const code =
    answer !== undefined && answer.httpStatus >= 200 && answer.httpStatus < 300
      ? CLIENT_ERROR_CODES.BAD_RESPONSE
      : (r.error?.type ?? '')
  const result = failedJudgeResult(verdict, language, code, r.error?.message ?? '')
  if (r.maybe_ran !== undefined) result.maybe_ran = r.maybe_ran
  return result
}

/** What a {@link Judges} needs of its client. */
export interface JudgeContext {
  transport: Transport
  policy: RetryPolicy
  stats: RetryStats
  /** Time a judge may take beyond its own bound, queueing and retries included, ms. */
  slackMs: number
  /** Also retry fleet verdicts whose program may have run (the client's `retryMaybeRan`). */
  retryMaybeRan?: boolean
}

/** The judge calls of a client (`SandfleetClient.judge`, `judgeBatch`). */
export class Judges {
  readonly #c: JudgeContext

  constructor(context: JudgeContext) {
    this.#c = context
  }

  #deadline(requests: readonly JudgeRequest[], options: CallOptions): number {
    const longest = Math.max(...requests.map((r) => judgeTimeBoundMs(r)))
    return Date.now() + (options.deadlineMs ?? longest + this.#c.slackMs)
  }

  /**
   * Judges one program. Resolves with its result whatever the verdict (a fleet verdict left after the retries is
   * returned, not thrown); rejects only on abort.
   */
  async judge(request: JudgeRequest, options: CallOptions = {}): Promise<JudgeResult> {
    const [result] = await this.#rounds([request], '/v1/judge', this.#deadline([request], options), options.signal)
    return result as JudgeResult
  }

  /**
   * Judges many as batches (`POST /v1/judge/batch`, chunks of at most 1024); results in request order. Judges that
   * come back with a fleet verdict are re-sent together.
   */
  async judgeBatch(requests: JudgeRequest[], options: CallOptions = {}): Promise<JudgeResult[]> {
    if (requests.length === 0) return []
    const deadline = this.#deadline(requests, options)
    const chunks: JudgeRequest[][] = []
    for (let i = 0; i < requests.length; i += LIMITS.maxBatchItems)
      chunks.push(requests.slice(i, i + LIMITS.maxBatchItems))
    const parts = await Promise.all(
      chunks.map(async (chunk) => await this.#rounds(chunk, '/v1/judge/batch', deadline, options.signal))
    )
    return parts.flat()
  }

  /** Sends `requests` (one to `/v1/judge`, or a batch) until none has a fleet verdict, the attempts or time run out. */
  async #rounds(
    requests: JudgeRequest[],
    path: '/v1/judge' | '/v1/judge/batch',
    deadline: number,
    signal?: AbortSignal
  ): Promise<JudgeResult[]> {
    const { transport, policy, stats } = this.#c
    const results = new Array<JudgeResult>(requests.length)
    const language = (i: number): string => requests[i]?.language ?? 'python'
    let pending = requests.map((_, i) => i)
    stats.calls += requests.length
    for (let round = 1; pending.length > 0; round++) {
      if (signal?.aborted) throw abortedError(signal.reason)
      const remaining = deadline - Date.now()
      if (remaining <= 0) {
        for (const i of pending) results[i] ??= failedJudge(language(i), undefined, undefined, true)
        break
      }
      const timeout = AbortSignal.timeout(remaining)
      const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
      stats.attempts += pending.length
      let answer: JsonAnswer | undefined
      let got: JudgeResult[]
      try {
        const one = path === '/v1/judge'
        answer = await transport.json(
          'POST',
          path,
          one ? requests[0] : { requests: pending.map((i) => requests[i]) },
          combined
        )
        const list = one ? [answer.body] : (answer.body as { results?: unknown[] } | null)?.results
        got =
          answer.httpStatus < 300 && Array.isArray(list) && list.length === pending.length
            ? list.map((r, k) =>
                isJudgeResult(r) ? r : failedJudge(language(pending[k] as number), answer, undefined, false)
              )
            : pending.map((i) => failedJudge(language(i), answer, undefined, false))
      } catch (err) {
        if (signal?.aborted) throw abortedError(err)
        got = pending.map((i) => failedJudge(language(i), undefined, err, timeout.aborted))
      }
      const again: number[] = []
      pending.forEach((i, k) => {
        results[i] = got[k] as JudgeResult
        const r = got[k] as JudgeResult
        const retried = isRetriableVerdict(r.verdict) && (this.#c.retryMaybeRan === true || !judgeMayHaveRun(r))
        if (retried && round < policy.maxAttempts) again.push(i)
      })
      if (again.length === 0) break
      const delay = backoffDelayMs(policy, round, answer?.retryAfterMs ?? 0)
      if (Date.now() + delay >= deadline) break
      try {
        await sleep(delay, signal)
      } catch (err) {
        throw abortedError(err)
      }
      stats.retries += again.length
      pending = again
    }
    return results
  }
}
