/**
 * The retry wrapper around one call: retries only the fleet's retriable statuses (`overloaded`,
 * `queue_timeout`, `infra_error`, which HTTP 429/503 and dropped connections map to), with
 * backoff and jitter, never past the call's deadline, never on a status the code produced; and,
 * unless told (`retryMaybeRan`), only those whose code surely did not run (`mayHaveRun`: an
 * `infra_error` retried only when its `maybe_ran` is false), so a retry never runs a call twice.
 */
import { isRetriable, mayHaveRun, type ExecResult } from '@sandfleet/protocol'
import { backoffDelayMs, sleep, type RetryPolicy } from './backoff.ts'
import { abortedError } from './errors.ts'
import { resultFromFailure, type Attempt } from './transport.ts'

/** Counters a client keeps about its retries. */
export interface RetryStats {
  /** Calls made. */
  calls: number
  /** Attempts made (calls + retries). */
  attempts: number
  /** Retries made. */
  retries: number
}

/** What decides whether an attempt's result is retried. */
export type RetryPredicate = (result: ExecResult) => boolean

/**
 * The client's rule: a fleet status whose code surely did not run; with `maybeRan`, any fleet status (a retry of one
 * that may have run carries its request_id, so a runner that had it answers with its first run while it lives).
 */
export function retriableResult(maybeRan: boolean): RetryPredicate {
  return maybeRan ? (r) => isRetriable(r.status) : (r) => isRetriable(r.status) && !mayHaveRun(r)
}

/**
 * Runs `attempt` until its result is not retriable, the attempts run out, or the next retry
 * would start past `deadline`; returns the last result. Rejects only when `signal` aborts. Each
 * attempt but the first is given the result of the one before.
 */
export async function withRetries(
  attempt: (signal: AbortSignal, last: ExecResult | undefined) => Promise<Attempt>,
  options: {
    policy: RetryPolicy
    deadline: number
    signal?: AbortSignal
    stats?: RetryStats
    retriable?: RetryPredicate
    random?: () => number
  }
): Promise<ExecResult> {
  const { policy, deadline, signal, stats } = options
  const retriable = options.retriable ?? retriableResult(false)
  if (stats) stats.calls++
  let last: ExecResult | undefined
  for (let n = 1; ; n++) {
    if (signal?.aborted) throw abortedError(signal.reason)
    const remaining = deadline - Date.now()
    if (remaining <= 0) return last ?? resultFromFailure(undefined, true)
    const timeout = AbortSignal.timeout(remaining)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    if (stats) stats.attempts++
    const a = await attempt(combined, last)
    last = a.result
    if (!retriable(a.result) || n >= policy.maxAttempts) return a.result
    const delay = backoffDelayMs(policy, n, a.retryAfterMs, options.random)
    if (Date.now() + delay >= deadline) return a.result
    try {
      await sleep(delay, signal)
    } catch (err) {
      throw abortedError(err)
    }
    if (stats) stats.retries++
  }
}
