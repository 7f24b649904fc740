/**
 * `@sandfleet/client`: the HTTP client of a sandfleet fleet (undici Pool, keep-alive).
 *
 * @example
 * ```ts
 * import { SandfleetClient } from '@sandfleet/client'
 * const client = new SandfleetClient({ url: 'http://127.0.0.1:8080' })
 * const r = await client.execute({ code: 'print(6*7)', timeout_ms: 2000 })
 * if (r.status === 'ok') console.log(r.stdout) // "42\n"
 * const session = await client.createSession({ ttl_s: 300 })
 * await session.execute({ code: 'x = 41' })
 * console.log((await session.execute({ code: 'print(x + 1)' })).stdout)
 * const judged = await client.judge({ language: 'cpp', code: src, tests: [{ stdin: '1 2', expected: '3' }] })
 * console.log(judged.verdict, judged.passed, judged.total) // "accepted 1 1"
 * await session.close(); await client.close()
 * ```
 */
export { SandfleetClient, type ClientOptions, type SessionOptions, type ClientState } from './client.ts'
export type { CallOptions } from './call-options.ts'
export { Session, type SessionState } from './session.ts'
export { ClientError, CLIENT_ERROR_CODES, type ClientErrorCode } from './errors.ts'
export { DEFAULT_RETRY, backoffDelayMs, parseRetryAfterMs, type RetryPolicy } from './backoff.ts'
export { withRetries, type RetryStats, type RetryPredicate } from './retry.ts'
export { Limiter } from './limiter.ts'
export type { Attempt } from './transport.ts'
export { isJudgeResult } from './judge.ts'
