/**
 * {@link RetryingEngine}: an {@link Engine} that retries the inference engine's transient
 * failures (connection refused or reset, HTTP 429 and 5xx: a server restarting or syncing
 * weights) with backoff and jitter, so one hiccup does not lose a whole rollout. Answers that
 * say the request itself is wrong (other 4xx, a malformed answer) and aborts are not retried.
 */
import { backoffDelayMs, DEFAULT_RETRY, type RetryPolicy } from '@sandfleet/client'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { ChatMessage, ChatTemplateOptions, Engine, Generation, GenerateRequest } from './engine.ts'

/** True for the failures worth another attempt. */
export function isTransientEngineError(err: unknown): boolean {
  if (!(err instanceof TrainerError)) return false
  if (err.code === TRAINER_ERROR_CODES.ENGINE_CONNECTION) return true
  return err.code === TRAINER_ERROR_CODES.ENGINE_HTTP && (err.statusCode === 429 || err.statusCode >= 500)
}

/** Wraps `inner`; every call is retried per `policy` (default: 6 attempts, 50 ms base, 2 s cap). */
export class RetryingEngine implements Engine {
  readonly url: string
  /** Retries made so far. */
  retries = 0
  private readonly policy: RetryPolicy

  /** A retrying view of `inner`. */
  constructor(
    private readonly inner: Engine,
    policy: Partial<RetryPolicy> = {}
  ) {
    this.url = inner.url
    this.policy = { ...DEFAULT_RETRY, ...policy }
  }

  private async attempt<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let n = 1; ; n++) {
      try {
        return await fn()
      } catch (err) {
        if (signal?.aborted || n >= this.policy.maxAttempts || !isTransientEngineError(err)) throw err
        const delay = backoffDelayMs(this.policy, n)
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => {
            signal?.removeEventListener('abort', onAbort)
            resolve()
          }, delay)
          const onAbort = (): void => {
            clearTimeout(timer)
            reject(new TrainerError(TRAINER_ERROR_CODES.ABORTED, 'aborted between engine retries', 499, { cause: err }))
          }
          signal?.addEventListener('abort', onAbort, { once: true })
        })
        this.retries++
      }
    }
  }

  /** {@link Engine.generate}, retried. */
  async generate(req: GenerateRequest): Promise<Generation> {
    return await this.attempt(async () => await this.inner.generate(req), req.signal)
  }

  /** {@link Engine.tokenize}, retried. */
  async tokenize(text: string, signal?: AbortSignal): Promise<number[]> {
    return await this.attempt(async () => await this.inner.tokenize(text, signal), signal)
  }

  /** {@link Engine.applyChatTemplate}, retried. */
  async applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): Promise<number[]> {
    return await this.attempt(async () => await this.inner.applyChatTemplate(messages, options), options?.signal)
  }

  /** Closes the wrapped engine. */
  async close(): Promise<void> {
    await this.inner.close()
  }
}
