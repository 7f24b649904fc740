/**
 * Tenant quotas: every POST a tenant sends (a call, a batch, a session's cell or its creation, a
 * compatible API's call, an MCP `tools/call`) takes its weight of the tenant's
 * {@link TenantQuota} before anything else is done for it: one call, or a batch's items. Past
 * either quota the answer is 429 with `Retry-After` (`SF_ERR_GATEWAY_TENANT_IN_FLIGHT`,
 * `SF_ERR_GATEWAY_TENANT_RATE`) and nothing is queued; the in-flight part is given back when the
 * response closes. Other tenants are not touched: each has its own quotas.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CounterChild } from '@sandfleet/metrics'
import { GatewayError } from '../errors.ts'
import type { GatewayMetrics } from '../metrics.ts'
import { TenantQuota, type QuotaReason } from '../tenants/tenant-quota.ts'
import type { Tenant } from '../tenants/tenants.ts'

/** Batch routes and the field holding their items. */
const BATCH_ITEMS: Readonly<Record<string, string>> = {
  '/v1/execute/batch': 'requests',
  '/run/batch': 'submissions',
  '/run/long-batch': 'submissions',
  '/judge/batch': 'submissions',
  '/judge/long-batch': 'submissions'
}

const isToolCall = (m: unknown): boolean => (m as { method?: unknown } | null)?.method === 'tools/call'

/** The calls a POST to `route` with `body` weighs: a batch its items, an MCP message its tool calls, anything else one. */
export function callsOf (route: string, body: unknown): number {
  if (route === '/mcp') return Array.isArray(body) ? body.filter(isToolCall).length : isToolCall(body) ? 1 : 0
  const field = BATCH_ITEMS[route]
  const items = field === undefined || typeof body !== 'object' || body === null ? undefined : (body as Record<string, unknown>)[field]
  return Array.isArray(items) ? Math.max(1, items.length) : 1
}

/** A tenant's quota and its metric children, made once. */
interface TenantState {
  quota: TenantQuota
  calls: CounterChild
  rejected: Record<QuotaReason, CounterChild>
}

/** Adds the quota hook for `tenants`; answers each tenant's quota by name (for metrics and tests). */
export function installQuotas (app: FastifyInstance, tenants: readonly Tenant[], metrics: GatewayMetrics, inFlightRetryAfterS: number): ReadonlyMap<string, TenantQuota> {
  const states = new Map<Tenant, TenantState>()
  for (const tenant of tenants) {
    const children = metrics.tenantChildren(tenant.name)
    states.set(tenant, { quota: new TenantQuota(tenant.maxInFlight, tenant.ratePerSecond), ...children })
  }
  const quotas = new Map([...states].map(([tenant, state]) => [tenant.name, state.quota]))
  metrics.watchTenants(quotas)
  if (tenants.length === 0) return quotas
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const route = request.routeOptions.url
    // (no route: the 404 handler, which runs nothing)
    const state = request.tenant === undefined || request.method !== 'POST' || route === undefined ? undefined : states.get(request.tenant)
    if (state === undefined) { done(); return }
    const weight = callsOf(route as string, request.body)
    if (weight === 0) { done(); return }
    const refused = state.quota.tryTake(weight, inFlightRetryAfterS)
    if (refused !== undefined) {
      state.rejected[refused.reason].inc()
      void reply.header('retry-after', String(refused.retryAfterS))
      const { name, maxInFlight, ratePerSecond } = request.tenant as Tenant
      done(refused.reason === 'in_flight'
        ? new GatewayError('SF_ERR_GATEWAY_TENANT_IN_FLIGHT', `API key ${name} holds ${state.quota.inFlight} calls; it may hold ${maxInFlight} (asked for ${weight}); retry after ${refused.retryAfterS} s`)
        : new GatewayError('SF_ERR_GATEWAY_TENANT_RATE', `API key ${name} may start ${ratePerSecond} calls a second (asked for ${weight}); retry after ${refused.retryAfterS} s`))
      return
    }
    state.calls.inc(weight)
    reply.raw.once('close', () => state.quota.release(weight))
    done()
  })
  return quotas
}
