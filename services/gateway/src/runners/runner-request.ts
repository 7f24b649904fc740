/**
 * One JSON request to a runner that knows whether it left this gateway: undici's dispatcher is
 * driven with a handler of its own, which learns when the request is about to be written on a
 * connected socket (`onConnect`). A request that fails or is aborted before that (its connection
 * still being made: a runner cut off, or one that refuses; the pool's connections all taken)
 * never reached the runner: it rejects with a {@link NotSentError}, and the call surely did not
 * run. After it, the runner may have it.
 */
import type { Dispatcher } from 'undici'

/** A request that never left this gateway: `cause` says why (a refused or timed-out connect, an abort). */
export class NotSentError extends Error {
  readonly neverSent = true
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause })
    this.name = 'NotSentError'
  }
}

/** What a request sends. */
export interface RunnerRequest {
  method: 'GET' | 'POST'
  path: string
  headers: Record<string, string>
  body?: string
  /** Longest wait for the answer's headers, and between chunks of its body, ms. */
  timeoutMs: number
  signal?: AbortSignal
}

/** An answer: its HTTP status and its body, parsed as JSON (null when empty). */
export interface RunnerAnswer {
  statusCode: number
  body: unknown
}

/** Sends `request` through `dispatcher` and resolves with the runner's JSON answer; see the module comment. */
export function requestJson(dispatcher: Dispatcher, request: RunnerRequest): Promise<RunnerAnswer> {
  return new Promise((resolve, reject) => {
    const { signal } = request
    let sent = false
    let done = false
    let abort: ((err: Error) => void) | undefined
    let statusCode = 0
    const chunks: Buffer[] = []
    const finish = (err: unknown, answer?: RunnerAnswer): void => {
      if (done) return
      done = true
      signal?.removeEventListener('abort', onAbort)
      if (answer !== undefined) resolve(answer)
      else reject(sent ? err : new NotSentError(err))
    }
    const reason = (): Error => (signal?.reason instanceof Error ? signal.reason : new Error('aborted'))
    const onAbort = (): void => {
      // before the request was written it is dropped when its turn comes (onConnect), and answered now
      if (abort !== undefined) abort(reason())
      else finish(reason())
    }
    if (signal?.aborted === true) {
      finish(reason())
      return
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const handler = {
      onConnect(cancel: (err: Error) => void): void {
        if (done) {
          cancel(reason())
          return
        }
        abort = cancel
        sent = true
      },
      onHeaders(code: number): boolean {
        statusCode = code
        return true
      },
      onData(chunk: Buffer): boolean {
        chunks.push(chunk)
        return true
      },
      onComplete(): void {
        const text = Buffer.concat(chunks).toString('utf8')
        try {
          finish(undefined, { statusCode, body: text === '' ? null : JSON.parse(text) })
        } catch (err) {
          finish(err)
        }
      },
      onError(err: Error): void {
        finish(err)
      }
    }
    dispatcher.dispatch(
      {
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body ?? null,
        headersTimeout: request.timeoutMs,
        bodyTimeout: request.timeoutMs
      },
      handler as unknown as Dispatcher.DispatchHandler
    )
  })
}
