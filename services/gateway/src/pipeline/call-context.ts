/**
 * The pipeline's first stage: a request of a route that declares calls (route-calls.ts) gets its
 * one {@link CallContext} (the protocol's), made here once and frozen: the deadline its calls may
 * wait for a sandbox until (the gateway's `queueTimeoutMs` from now), the tenant of its API key
 * (the auth hook's, `request.tenant`), the caller's signal (its response closed before it
 * finished) and the request's id (`request.id`, on the gateway's log lines and the runner's).
 * The route's handler hands it down as an argument (the router, the runner clients, the runner,
 * its pool); nothing below the edge keeps a tenant of its own.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { callContext, type CallContext } from '@sandfleet/protocol'
import { callerSignal } from '@sandfleet/protocol/http'

declare module 'fastify' {
  interface FastifyRequest {
    /** The context of the request's calls; set on every route that declares calls (`config.calls`). */
    callContext: CallContext
  }
}

/** The context of `request`'s calls, its queue budget `queueTimeoutMs` from now. */
export function callContextOf(request: FastifyRequest, reply: FastifyReply, queueTimeoutMs: number): CallContext {
  return callContext({
    budgetMs: queueTimeoutMs,
    tenant: request.tenant?.name,
    signal: callerSignal(reply.raw),
    requestId: request.id
  })
}

/** Installs the stage on `app` (the root instance, before the routes and the pipeline's other stages). */
export function installCallContext(app: FastifyInstance, queueTimeoutMs: number): void {
  app.decorateRequest('callContext', null as unknown as CallContext)
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (request.routeOptions.config.calls !== undefined)
      request.callContext = callContextOf(request, reply, queueTimeoutMs)
    done()
  })
}
