/**
 * The JSON body parser of every route: Fastify's own (prototype poisoning refused), and a body
 * nested deeper than the contract's `LIMITS.maxJsonDepth` refused as invalid JSON before any
 * route sees it. Each API answers that in its own shape (400 `SF_ERR_GATEWAY_INVALID_JSON`,
 * 422 `json_invalid` on the compat routes), and no recursive code meets unbounded depth (the
 * compat routes' 422 echoes the input; serializing a 5,000-deep echo overflowed the stack).
 */
import type { FastifyInstance } from 'fastify'
import { LIMITS, depthLimited } from '@sandfleet/protocol'

/** Replaces `app`'s application/json parser (call on the root instance, before routes). */
export function installJsonBody (app: FastifyInstance): void {
  const parse = depthLimited(app.getDefaultJsonParser('error', 'error'), LIMITS.maxJsonDepth)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => { parse(request, body as string, done) })
}
