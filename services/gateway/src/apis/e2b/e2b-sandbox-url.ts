/**
 * E2B's sandbox URL: everything inside one sandbox, routed by the `E2b-Sandbox-Id` and `E2b-Sandbox-Port` headers
 * (the code interpreter on 49999, envd on 49983). Its routes match only requests that carry `E2b-Sandbox-Port` (a
 * router constraint that must match once the header is there), so the API URL and the sandbox URL may be one base
 * URL or two: the headers tell, and a request with them never reaches another route of the gateway.
 *
 * Its caller is whoever holds the sandbox's `X-Access-Token` (the API key does not come here): the gateway asks the
 * sandbox's runner whose sandbox the token opens (remembered a while, fleet-sandboxes.ts), and the request runs for
 * that key's tenant, its calls taking that tenant's quota. The code contexts' routes also take no token at all (the
 * SDK sends none there); such a request runs for no tenant. A sandbox that is gone answers 502, as E2B's proxy does.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SANDBOX_LIMITS, type SandboxAuth } from '@sandfleet/protocol'
import { GatewayError, RunnerRefusal } from '../../errors.ts'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import type { Tenant } from '../../tenants/tenants.ts'
import { ConnectError } from './connect-rpc.ts'
import { isGone, isUnauthorized, sandboxGone } from './e2b-shapes.ts'

/** Which of the sandbox's servers a route imitates, and so how it answers a refusal. */
export type SandboxServer = 'interpreter' | 'envd' | 'rpc'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A sandbox URL route: the server it imitates, and whether it takes requests with no token. */
    e2bSandbox?: { server: SandboxServer; tokenless?: boolean }
  }
}

/** The sandbox a sandbox URL request is for, and how its caller is known. */
export interface SandboxRef {
  id: string
  auth: SandboxAuth
}

const refs = new WeakMap<FastifyRequest, SandboxRef>()

/** The sandbox of a sandbox URL request (set by the routes' own auth hook). */
export function sandboxRef(request: FastifyRequest): SandboxRef {
  const ref = refs.get(request)
  if (ref === undefined)
    throw new GatewayError('SF_ERR_GATEWAY_INTERNAL', 'a sandbox URL route ran without its sandbox')
  return ref
}

/** The name of the router constraint on `E2b-Sandbox-Port`. */
export const PORT_CONSTRAINT = 'e2bSandboxPort'

/** Adds the constraint (once, on the gateway's router). */
export function installPortConstraint(app: FastifyInstance): void {
  app.addConstraintStrategy({
    name: PORT_CONSTRAINT,
    storage() {
      const routes = new Map<string, unknown>()
      return {
        get: (port: string) => (routes.get(port) ?? null) as never,
        set: (port: string, store: unknown) => {
          routes.set(port, store)
        }
      }
    },
    deriveConstraint: (req: { headers: Record<string, string | string[] | undefined> }) => {
      const port = req.headers['e2b-sandbox-port']
      return typeof port === 'string' ? port : undefined
    },
    mustMatchWhenDerived: true
  })
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** A refusal as the server of `request`'s route answers it. */
export function answerRefusal(request: FastifyRequest, reply: FastifyReply, err: unknown): FastifyReply {
  const server = request.routeOptions.config.e2bSandbox?.server ?? 'envd'
  const id = refs.get(request)?.id ?? header(request, 'e2b-sandbox-id') ?? ''
  if (isGone(err)) return reply.code(502).send(sandboxGone(id))
  if (err instanceof ConnectError) return reply.code(err.httpStatus).send(err.toJSON())
  const statusCode =
    err instanceof RunnerRefusal
      ? err.statusCode
      : typeof (err as { statusCode?: unknown }).statusCode === 'number'
        ? (err as { statusCode: number }).statusCode
        : 500
  const message = statusCode >= 500 && !(err instanceof RunnerRefusal) ? 'internal error' : (err as Error).message
  if (statusCode >= 500 && !(err instanceof RunnerRefusal)) request.log.error({ err }, 'e2b sandbox route failed')
  if (server === 'rpc') {
    const code = isUnauthorized(err)
      ? 'unauthenticated'
      : statusCode === 429
        ? 'resource_exhausted'
        : statusCode === 413
          ? 'resource_exhausted'
          : statusCode >= 500
            ? 'internal'
            : 'invalid_argument'
    return reply.code(statusCode).send({ code, message })
  }
  if (server === 'interpreter') return reply.code(statusCode).type('text/plain').send(message)
  return reply.code(statusCode).send({ code: statusCode, message })
}

/**
 * The sandbox URL's own auth, as the `onRequest` hook of its routes: the sandbox and its caller found, and the
 * request made its owner's tenant's (see the module comment).
 */
export function sandboxAuth(
  sandboxes: FleetSandboxes,
  tenants: readonly Tenant[]
): (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void {
  const byKey = new Map(tenants.map((t) => [t.callerKey, t]))
  return (request, reply, done) => {
    const id = header(request, 'e2b-sandbox-id')
    if (id === undefined || id.length > 512) {
      void reply.code(400).send({ code: 400, message: 'E2b-Sandbox-Id: the sandbox id header is required' })
      return
    }
    const token = header(request, 'x-access-token')
    if (token === undefined) {
      if (request.routeOptions.config.e2bSandbox?.tokenless === true) {
        refs.set(request, { id, auth: { token: undefined } })
        done()
        return
      }
      void answerRefusal(request, reply, new RunnerRefusal(401, missingToken(id)))
      return
    }
    sandboxes.ownerOf(id, token).then(
      (owner) => {
        refs.set(request, { id, auth: { token } })
        const tenant = byKey.get(owner)
        if (tenant === undefined) {
          done()
          return
        }
        request.tenant = tenant // the pipeline's call context takes it from here
        request.log = reply.log = request.log.child({ tenant: tenant.name })
        done()
      },
      (err: unknown) => {
        void answerRefusal(request, reply, err)
      }
    )
  }
}

function missingToken(id: string): ConstructorParameters<typeof RunnerRefusal>[1] {
  return {
    status: 'invalid_request',
    error: { code: 'SF_ERR_SANDBOX_TOKEN', message: `sandbox ${id}: X-Access-Token is required` }
  }
}

/** The error handler of the sandbox URL's routes: what Fastify or the pipeline refused, in the route's shape. */
export function sandboxErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return answerRefusal(request, reply, err)
}

/** Environment variables as a run or a process takes them: string values, not too many. */
export function envOf(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined
  if (
    typeof value !== 'object' ||
    Array.isArray(value) ||
    Object.keys(value).length > SANDBOX_LIMITS.maxEnv ||
    !Object.values(value).every((v) => typeof v === 'string')
  )
    throw Object.assign(new Error(`${field}: string values, at most ${SANDBOX_LIMITS.maxEnv}`), { statusCode: 400 })
  return value as Record<string, string>
}
