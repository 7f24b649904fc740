/** An AbortSignal that fires when the caller goes away before its response was sent. */
import type { ServerResponse } from 'node:http'

/**
 * Follows the response, not the request: a request's stream closes as soon as its body was read
 * (Fastify's `request.signal` follows it), while the response closes early only when the caller
 * hung up. Pass `reply.raw`. A close after the response finished aborts nothing.
 */
export function callerSignal (res: Pick<ServerResponse, 'once' | 'writableFinished'>): AbortSignal {
  const ac = new AbortController()
  res.once('close', () => { if (!res.writableFinished) ac.abort() })
  return ac.signal
}
