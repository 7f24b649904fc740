/**
 * Optional API-key auth: when keys are configured, every route that runs code (the native API's
 * and the compatible APIs', apis/) needs `Authorization: Bearer KEY` or `x-api-key: KEY`.
 * Health, readiness, metrics and docs stay open. The key presented is looked up in constant time
 * ({@link KeyTable}); its tenant is set on the request (`request.tenant`, the one place the
 * gateway holds it) and named on every log line of the request (`tenant`). The pipeline puts its
 * name into the request's call context (pipeline/call-context.ts), which every call the request
 * makes to a runner carries, whichever API the route belongs to.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'
import type { KeyTable } from '../tenants/key-table.ts'
import { callerKeyOf, type Tenant } from '../tenants/tenants.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The tenant of the API key presented; undefined without keys configured (and on open paths). */
    tenant: Tenant | undefined
  }
}

/** Paths that stay open with keys configured (probes, scrapes, the API description). */
const OPEN = /^\/(healthz|readyz|metrics|docs|openapi\.json)(\/|\?|$)/

/** True for a URL that needs no API key (see {@link OPEN}). */
export function isOpenPath(url: string): boolean {
  return OPEN.test(url)
}

/** The API key a request presents, if any. */
export function presented(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim()
  const key = request.headers['x-api-key']
  return typeof key === 'string' ? key : undefined
}

/** Adds the auth hook to `app` when `keys` holds any. */
export function installAuth(app: FastifyInstance, keys: KeyTable<Tenant>): void {
  app.decorateRequest('tenant', undefined)
  if (keys.size === 0) return
  app.addHook('onRequest', (request, reply, done) => {
    if (OPEN.test(request.url)) {
      done()
      return
    }
    const key = presented(request)
    const tenant = key === undefined ? undefined : keys.find(key)
    if (tenant === undefined) {
      done(new GatewayError('SF_ERR_GATEWAY_UNAUTHORIZED', 'a valid API key is required (Authorization: Bearer KEY)'))
      return
    }
    request.tenant = tenant
    request.log = reply.log = request.log.child({ tenant: tenant.name })
    done()
  })
}

/**
 * What identifies a caller to the runners (per-key session limits): a digest of its API key,
 * never the key; '' without one.
 */
export function callerKey(request: FastifyRequest): string {
  if (request.tenant !== undefined) return request.tenant.callerKey
  const key = presented(request)
  return key === undefined ? '' : callerKeyOf(key)
}
