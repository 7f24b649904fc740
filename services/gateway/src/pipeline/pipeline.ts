/**
 * The one path every call route takes, whatever its API: parse → context → limits → quota →
 * admission → router. Parse is Fastify's (the JSON body parser, then the route's own body schema:
 * the protocol's contract for /v1, the imitated service's model for a compatible API); the
 * route's handler is the router's call, in the request's call context (call-context.ts: its
 * deadline, tenant, signal and id, made once, before the other stages). Then one `preHandler`
 * hook runs the three stages on the calls the route declares (route-calls.ts), in this order,
 * each once a request:
 *
 * - what the body's schema cannot say (the route's `problem`, a judge's tests given twice), refused
 *   as the schema's refusals are: a 400 naming the field;
 * - limits: every call held to the deployment's limits (call-limits.ts), refused naming its
 *   field (a 400 ErrorBody, or the route's own answer: a compatible API's 422, MCP's tool error);
 * - quota: the tenant's in-flight and rate quotas take the request's weight (quotas.ts);
 * - admission: the gateway's bound on calls held and their memory (admission.ts).
 *
 * A refusal of the quota or admission is a 429 with `Retry-After`; what a stage took is given
 * back when the response closes. A route that declares no calls (health, docs, a session's
 * info) goes through none of the stages.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'
import type { Admission } from './admission.ts'
import { installCallContext } from './call-context.ts'
import { overLimit, type CallLimits, type OverLimit } from './call-limits.ts'
import type { TenantQuotas } from './quotas.ts'
import { weightOf, type RouteCalls } from './route-calls.ts'

/** The stages' state. */
export interface PipelineParts {
  limits: CallLimits
  quotas: TenantQuotas
  admission: Admission
  /** `Retry-After` of an admission refusal, seconds. */
  retryAfterS: number
  /** How long a request's calls may wait for a sandbox, from when it enters the pipeline (its context's deadline). */
  queueTimeoutMs: number
}

/** The gateway's 400 for a call over a limit: its field's path in the body, as the route places it. */
function limitError(over: OverLimit, declared: Pick<RouteCalls, 'at'>): GatewayError {
  const at = over.index === undefined || declared.at === undefined ? '' : `${declared.at(over.index)}/`
  return new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', over.message, { field: `${at}${over.field}` })
}

/** Installs the stages on `app` (the root instance, before the routes). */
export function installPipeline(app: FastifyInstance, parts: PipelineParts): void {
  const { limits, quotas, admission, retryAfterS } = parts
  installCallContext(app, parts.queueTimeoutMs)

  /** Takes `weight` of admission until the response closes, or answers the 429 to give. */
  const admit = (request: FastifyRequest, reply: FastifyReply, weight: number): GatewayError | undefined => {
    const bodyBytes = Number(request.headers['content-length']) || 0
    if (!admission.tryAcquire(weight, bodyBytes)) {
      void reply.header('retry-after', String(retryAfterS))
      return new GatewayError(
        'SF_ERR_GATEWAY_OVERLOADED',
        `the gateway holds ${admission.inFlight} calls, ${Math.round(admission.bytes / 2 ** 20)} MiB (limits ${admission.limit} calls, ${Math.round(admission.memoryBytes / 2 ** 20)} MiB); retry later`
      )
    }
    reply.raw.once('close', () => admission.release(weight, bodyBytes))
    return undefined
  }

  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const declared = request.routeOptions.config.calls
    if (declared === undefined) {
      done()
      return
    }
    const body: unknown = request.body
    const problem = declared.problem?.(body)
    if (problem !== undefined) {
      done(
        new GatewayError('SF_ERR_GATEWAY_INVALID_REQUEST', `${problem.field}: ${problem.message}`, {
          field: problem.field
        })
      )
      return
    }
    const calls = declared.of(body)
    const over = overLimit(calls, limits, declared.batch === true)
    if (over !== undefined) {
      if (declared.refuse === undefined) {
        done(limitError(over, declared))
        return
      }
      const { statusCode, payload } = declared.refuse(over, body)
      void reply.code(statusCode).send(payload)
      return
    }
    const weight = weightOf(declared, body, calls)
    if (weight === 0) {
      done()
      return
    }
    done(quotas.take(request, reply, weight) ?? admit(request, reply, declared.held?.(weight) ?? weight))
  })
}
