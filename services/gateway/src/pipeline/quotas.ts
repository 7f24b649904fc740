/**
 * Tenant quotas, the pipeline's quota stage: a call route's request (a call, a batch, a
 * session's cell or its creation, a compatible API's call, an MCP message's tool calls) takes
 * its weight, as its route declares it (route-calls.ts), of its tenant's {@link TenantQuota}.
 * Past either quota the answer is 429 with `Retry-After` (`SF_ERR_GATEWAY_TENANT_IN_FLIGHT`,
 * `SF_ERR_GATEWAY_TENANT_RATE`) and nothing is queued; the in-flight part is given back when the
 * response closes. Other tenants are not touched: each has its own quotas.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { CounterChild } from '@sandfleet/metrics'
import { GatewayError } from '../errors.ts'
import type { GatewayMetrics } from '../metrics.ts'
import { TenantQuota, type QuotaReason } from '../tenants/tenant-quota.ts'
import type { Tenant } from '../tenants/tenants.ts'

/** A tenant's quota and its metric children, made once. */
interface TenantState {
  quota: TenantQuota
  calls: CounterChild
  rejected: Record<QuotaReason, CounterChild>
}

/** Every tenant's quotas, taken by the requests of its API key. */
export class TenantQuotas {
  /** Each tenant's quota, by name (for metrics and tests). */
  readonly byName: ReadonlyMap<string, TenantQuota>
  readonly #states = new Map<Tenant, TenantState>()
  readonly #inFlightRetryAfterS: number

  /** Quotas for `tenants`, counted in `metrics`; a refusal in flight says retry after `inFlightRetryAfterS`. */
  constructor(tenants: readonly Tenant[], metrics: GatewayMetrics, inFlightRetryAfterS: number) {
    for (const tenant of tenants) {
      const children = metrics.tenantChildren(tenant.name)
      this.#states.set(tenant, { quota: new TenantQuota(tenant.maxInFlight, tenant.ratePerSecond), ...children })
    }
    this.byName = new Map([...this.#states].map(([tenant, state]) => [tenant.name, state.quota]))
    this.#inFlightRetryAfterS = inFlightRetryAfterS
    metrics.watchTenants(this.byName)
  }

  /**
   * Takes `weight` calls of the request's tenant's quotas until its response closes, or answers
   * the 429 to give (its `Retry-After` set on `reply`); a request with no tenant takes nothing.
   */
  take(request: FastifyRequest, reply: FastifyReply, weight: number): GatewayError | undefined {
    const tenant = request.tenant
    const state = tenant === undefined ? undefined : this.#states.get(tenant)
    if (state === undefined) return undefined
    const refused = state.quota.tryTake(weight, this.#inFlightRetryAfterS)
    if (refused !== undefined) {
      state.rejected[refused.reason].inc()
      void reply.header('retry-after', String(refused.retryAfterS))
      const { name, maxInFlight, ratePerSecond } = tenant as Tenant
      return refused.reason === 'in_flight'
        ? new GatewayError(
            'SF_ERR_GATEWAY_TENANT_IN_FLIGHT',
            `API key ${name} holds ${state.quota.inFlight} calls; it may hold ${maxInFlight} (asked for ${weight}); retry after ${refused.retryAfterS} s`
          )
        : new GatewayError(
            'SF_ERR_GATEWAY_TENANT_RATE',
            `API key ${name} may start ${ratePerSecond} calls a second (asked for ${weight}); retry after ${refused.retryAfterS} s`
          )
    }
    state.calls.inc(weight)
    reply.raw.once('close', () => state.quota.release(weight))
    return undefined
  }
}
