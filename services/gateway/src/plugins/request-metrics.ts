/**
 * Per-route request metrics: every answered request is counted by its route template (`/v1/sessions/:id`,
 * never the raw URL; `unmatched` when no route matched), method and status code, and its time
 * from arrival to the end of its response observed. One `onResponse` hook, through label
 * children the metrics cache per route, method and status.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { UNMATCHED_ROUTE, type GatewayMetrics } from '../metrics.ts'

/** Adds the hook to `app`; install it before the routes. */
export function installRequestMetrics(app: FastifyInstance, metrics: GatewayMetrics): void {
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    metrics.observeRequest(
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000
    )
    done()
  })
}
