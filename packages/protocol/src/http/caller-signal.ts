/** An AbortSignal that fires when the caller goes away before its response was sent. */

/** What it needs of a response: Node's `ServerResponse` (Fastify's `reply.raw`). */
export interface ClosingResponse {
  once(event: 'close', listener: () => void): unknown
  readonly writableFinished: boolean
}

/**
 * Follows the response, not the request: a request's stream closes as soon as its body was read
 * (Fastify's `request.signal` follows it), while the response closes early only when the caller
 * hung up. Pass `reply.raw`. A close after the response finished aborts nothing.
 */
export function callerSignal(res: ClosingResponse): AbortSignal {
  const ac = new AbortController()
  res.once('close', () => {
    if (!res.writableFinished) ac.abort()
  })
  return ac.signal
}
