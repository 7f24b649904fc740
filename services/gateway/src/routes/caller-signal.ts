/** An AbortSignal that fires when the caller goes away before its response was sent. */
import type { FastifyReply } from 'fastify'

/**
 * Fastify's `request.signal` follows the request stream, which closes once the body was read;
 * this one follows the response instead.
 */
export function callerSignal (reply: FastifyReply): AbortSignal {
  const ac = new AbortController()
  const res = reply.raw
  res.once('close', () => { if (!res.writableFinished) ac.abort() })
  return ac.signal
}
