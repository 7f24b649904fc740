/**
 * Optional API-key auth: when keys are configured, every route that runs code (`/v1/…` and the
 * compatible APIs: `/run_code`, `/run`, `/judge`, `/mcp`, …) needs `Authorization: Bearer KEY`
 * or `x-api-key: KEY`. Health, readiness, metrics and docs stay open.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'

/** Paths that stay open with keys configured (probes, scrapes, the API description). */
const OPEN = /^\/(healthz|readyz|metrics|docs)(\/|\?|$)/

/** The API key a request presents, if any. */
export function presented (request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization
  if (typeof auth === 'string' && auth.startsWith('Bearer ')) return auth.slice(7).trim()
  const key = request.headers['x-api-key']
  return typeof key === 'string' ? key : undefined
}

function matches (key: string, keys: Buffer[]): boolean {
  const given = Buffer.from(key)
  let ok = false
  for (const k of keys) if (k.length === given.length && timingSafeEqual(k, given)) ok = true
  return ok
}

/** Adds the auth hook to `app` when `apiKeys` is not empty. */
export function installAuth (app: FastifyInstance, apiKeys: readonly string[]): void {
  if (apiKeys.length === 0) return
  const keys = apiKeys.map((k) => Buffer.from(k))
  app.addHook('onRequest', async (request) => {
    if (OPEN.test(request.url)) return
    const key = presented(request)
    if (key === undefined || !matches(key, keys)) {
      throw new GatewayError('SF_ERR_GATEWAY_UNAUTHORIZED', 'a valid API key is required (Authorization: Bearer KEY)')
    }
  })
}

/**
 * What identifies a caller to the runners (per-key session limits): a digest of its API key,
 * never the key; '' without one.
 */
export function callerKey (request: FastifyRequest): string {
  const key = presented(request)
  return key === undefined ? '' : createHash('sha256').update(key).digest('hex').slice(0, 32)
}
