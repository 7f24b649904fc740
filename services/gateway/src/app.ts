/**
 * Builds the gateway's Fastify instance without listening (tests use `inject()`): auth, then
 * the one pipeline of every API's call routes (pipeline/pipeline.ts: parse → limits → quota →
 * admission → router, the router retrying on another runner). The APIs (apis/: the native one,
 * with sessions routed by the runner named in their ids, and the compatible SandboxFusion,
 * code-judge and MCP, which translate shapes onto the same path) are registered from one list.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import type { Registry } from 'prom-client'
import { installJsonBody } from '@sandfleet/protocol/http'
import type { ApiContext } from './apis/api.ts'
import { APIS } from './apis/index.ts'
import type { GatewayConfig } from './config.ts'
import { GatewayError } from './errors.ts'
import { GatewayMetrics } from './metrics.ts'
import { Admission } from './pipeline/admission.ts'
import { installPipeline } from './pipeline/pipeline.ts'
import { TenantQuotas } from './pipeline/quotas.ts'
import { installAuth } from './plugins/auth.ts'
import { frameworkError, installErrorShape } from './plugins/error-shape.ts'
import { installRequestMetrics } from './plugins/request-metrics.ts'
import { docsRoutes, openApiOptions } from './routes/docs.ts'
import { healthRoutes } from './routes/health.ts'
import { infoRoute } from './routes/info.ts'
import { metricsRoute } from './routes/metrics.ts'
import { Router, type AffinityHook } from './runners/router.ts'
import type { RunnerClient } from './runners/runner-client.ts'
import { RunnerSet } from './runners/runner-set.ts'
import { routeSchemas } from './schemas.ts'
import { FleetSessions } from './sessions/fleet-sessions.ts'
import { KeyTable } from './tenants/key-table.ts'
import type { TenantQuota } from './tenants/tenant-quota.ts'
import { loadTenants, type Tenant } from './tenants/tenants.ts'

/** What {@link buildGatewayApp} needs. */
export interface GatewayOptions {
  config: GatewayConfig
  /**
   * Runners handed over directly (an in-process runner in `sandfleet serve`, tests). Added to
   * those of `config.runners` and `config.runnersDns`.
   */
  clients?: RunnerClient[]
  /** More registries served on /metrics beside the gateway's own (the local runner's). */
  registries?: Registry[]
  /** Session affinity seam (issue 5): names the runner a request must go to. */
  affinity?: AffinityHook
  /** A pino logger or `false`; default: Fastify's pino at `config.logLevel`. */
  logger?: FastifyBaseLogger | false
  /** The role this process's `sandfleet_build_info` names (default `gateway`). */
  component?: string
}

/** The gateway app, with its parts reachable for tests and the CLI. */
export interface GatewayApp {
  app: FastifyInstance
  runners: RunnerSet
  router: Router
  admission: Admission
  metrics: GatewayMetrics
  sessions: FleetSessions
  /** The API keys' tenants (none: no auth). */
  tenants: readonly Tenant[]
  /** Each tenant's quota, by name. */
  quotas: ReadonlyMap<string, TenantQuota>
}

/**
 * Builds the app; `app.ready()` discovers the runners and polls their load once. Reads
 * `apiKeysFile` now: a bad one throws `SF_ERR_GATEWAY_CONFIG`.
 */
export async function buildGatewayApp(options: GatewayOptions): Promise<GatewayApp> {
  const { config } = options
  const keys = loadTenants(config)
  const tenants = keys.map(([, tenant]) => tenant)
  const app: FastifyInstance = Fastify({
    ...(options.logger === undefined
      ? { logger: { level: config.logLevel } }
      : options.logger === false
        ? { logger: false }
        : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    return503OnClosing: true,
    frameworkErrors: frameworkError,
    // verbose: an error carries the schema it broke (an unknown field's "did you mean", schema-problem.ts)
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false, verbose: true }
    }
  })
  const runners = new RunnerSet({
    clients: options.clients ?? [],
    urls: config.runners,
    dns: config.runnersDns,
    dnsRefreshMs: config.dnsRefreshMs,
    loadPollMs: config.loadPollMs,
    silenceMs: config.runnerSilenceMs,
    connections: config.runnerConnections,
    queueTimeoutMs: config.queueTimeoutMs,
    graceMs: config.callGraceMs,
    secret: config.runnerSecret,
    logger: app.log
  })
  const router = new Router(runners, {
    maxAttempts: config.maxAttempts,
    maxSubBatchItems: config.maxSubBatchItems,
    ...(options.affinity === undefined ? {} : { affinity: options.affinity })
  })
  const metrics = new GatewayMetrics(runners, options.component === undefined ? {} : { component: options.component })
  router.observe(metrics.record)
  router.observeJudges(metrics.recordJudge)
  const admission = new Admission(
    config.maxInFlight,
    config.admissionMemoryMb > 0 ? config.admissionMemoryMb * 2 ** 20 : undefined
  )
  metrics.watchAdmission(admission)
  const schemas = routeSchemas(config)

  // Only JSON bodies: a text/plain body is a 415 naming the media type, never a string
  // that fails the schema with a confusing message.
  app.removeContentTypeParser('text/plain')
  installJsonBody(app)
  installErrorShape(app, metrics, config)
  installRequestMetrics(app, metrics)
  installAuth(app, new KeyTable(keys))
  const quotas = new TenantQuotas(tenants, metrics, config.retryAfterS)
  installPipeline(app, {
    limits: config,
    quotas,
    admission,
    retryAfterS: config.retryAfterS,
    queueTimeoutMs: config.queueTimeoutMs
  })
  await app.register(swagger, openApiOptions(tenants.length > 0, APIS))
  const sessions = new FleetSessions(runners)
  const context: ApiContext = { config, router, runners, sessions, schemas, tenants }
  for (const api of APIS) await app.register(api.routes, context)
  healthRoutes(app, runners)
  infoRoute(app, runners, schemas)
  metricsRoute(app, [metrics.registry, ...(options.registries ?? [])])
  docsRoutes(app)

  app.addHook('onReady', async () => {
    await runners.start()
    // a gateway whose wait cannot cover the runners it starts with does not start; one met later is refused alone
    const refusals = runners.refusals()
    if (refusals.length > 0)
      throw new GatewayError('SF_ERR_GATEWAY_CONFIG', `invalid gateway configuration:\n  - ${refusals.join('\n  - ')}`)
  })
  app.addHook('onClose', () => runners.close())
  return { app, runners, router, admission, metrics, sessions, tenants, quotas: quotas.byName }
}
