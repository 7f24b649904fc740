/** Retry delays: exponential backoff with full jitter, floored by the fleet's Retry-After. */

/** How a client retries the fleet's retriable statuses. */
export interface RetryPolicy {
  /** Most attempts per call, the first included (default 6). */
  maxAttempts: number
  /** Delay before the first retry, before jitter (default 50 ms). */
  baseDelayMs: number
  /** Largest delay between two attempts (default 2000 ms). */
  maxDelayMs: number
}

/** The default {@link RetryPolicy}. */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({ maxAttempts: 6, baseDelayMs: 50, maxDelayMs: 2000 })

/**
 * Delay before retry number `retry` (1 for the first retry): a uniform draw in
 * [0, min(maxDelayMs, baseDelayMs · 2^(retry-1))] ("full jitter"), never below `retryAfterMs`.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  retryAfterMs = 0,
  random: () => number = Math.random
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1))
  return Math.max(retryAfterMs, Math.floor(random() * cap))
}

/** Parses a `Retry-After` header (seconds or an HTTP date) into milliseconds; 0 when absent or bad. */
export function parseRetryAfterMs(value: string | string[] | undefined, now = Date.now()): number {
  const v = Array.isArray(value) ? value[0] : value
  if (v === undefined || v.trim() === '') return 0
  const seconds = Number(v)
  if (Number.isFinite(seconds)) return Math.max(0, Math.round(seconds * 1000))
  const date = Date.parse(v)
  return Number.isFinite(date) ? Math.max(0, date - now) : 0
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    function onAbort(): void {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
