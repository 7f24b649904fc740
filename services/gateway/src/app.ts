/**
 * Builds the gateway's Fastify instance without listening (tests use `inject()`):
 * auth → validation (one schema) → admission → route to the least loaded runner → retries.
 * Beside the native API it serves sessions (routed by the runner named in their ids) and the
 * compatible APIs (SandboxFusion, code-judge, MCP), which translate shapes onto the same path.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import type { Registry } from 'prom-client'
import { failedResult, type ExecResult } from '@sandfleet/protocol'
import { installJsonBody } from '@sandfleet/protocol/http'
import { codeJudgeCompat } from './compat/code-judge.ts'
import { batchWithinLimits, sessionsWithinLimits, withinLimits } from './compat/configured-limits.ts'
import type { CompatSessions } from './compat/execute.ts'
import { mcpCompat } from './compat/mcp.ts'
import { sandboxFusionCompat } from './compat/sandbox-fusion.ts'
import type { GatewayConfig } from './config.ts'
import { GatewayMetrics } from './metrics.ts'
import { Admission, admitted, installAdmission } from './plugins/admission.ts'
import { callerKey, installAuth } from './plugins/auth.ts'
import { frameworkError, installErrorShape } from './plugins/error-shape.ts'
import { installQuotas } from './plugins/quotas.ts'
import { installRequestMetrics } from './plugins/request-metrics.ts'
import { batchRoute } from './routes/batch.ts'
import { docsRoutes, openApiOptions } from './routes/docs.ts'
import { executeRoute } from './routes/execute.ts'
import { healthRoutes } from './routes/health.ts'
import { infoRoute } from './routes/info.ts'
import { metricsRoute } from './routes/metrics.ts'
import { sessionRoutes } from './routes/sessions.ts'
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
export async function buildGatewayApp (options: GatewayOptions): Promise<GatewayApp> {
  const { config } = options
  const keys = loadTenants(config)
  const tenants = keys.map(([, tenant]) => tenant)
  const app: FastifyInstance = Fastify({
    ...(options.logger === undefined
      ? { logger: { level: config.logLevel } }
      : options.logger === false ? { logger: false } : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    return503OnClosing: true,
    frameworkErrors: frameworkError,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false } }
  })
  const runners = new RunnerSet({
    clients: options.clients ?? [],
    urls: config.runners,
    dns: config.runnersDns,
    dnsRefreshMs: config.dnsRefreshMs,
    loadPollMs: config.loadPollMs,
    connections: config.runnerConnections,
    queueTimeoutMs: config.queueTimeoutMs,
    graceMs: config.callGraceMs,
    secret: config.runnerSecret,
    logger: app.log
  })
  const router = new Router(runners, {
    maxAttempts: config.maxAttempts,
    queueTimeoutMs: config.queueTimeoutMs,
    maxSubBatchItems: config.maxSubBatchItems,
    ...(options.affinity === undefined ? {} : { affinity: options.affinity })
  })
  const metrics = new GatewayMetrics(runners, options.component === undefined ? {} : { component: options.component })
  router.observe(metrics.record)
  const admission = new Admission(config.maxInFlight, config.admissionMemoryMb > 0 ? config.admissionMemoryMb * 2 ** 20 : undefined)
  metrics.watchAdmission(admission)
  const schemas = routeSchemas(config)

  // Only JSON bodies: a text/plain body is a 415 naming the media type, never a string
  // that fails the schema with a confusing message.
  app.removeContentTypeParser('text/plain')
  installJsonBody(app)
  installErrorShape(app, metrics, config)
  installRequestMetrics(app, metrics)
  installAuth(app, new KeyTable(keys))
  const quotas = installQuotas(app, tenants, metrics, config.retryAfterS)
  installAdmission(app, admission, config.retryAfterS)
  await app.register(swagger, openApiOptions(tenants.length > 0))
  const sessions = new FleetSessions(runners)
  executeRoute(app, router, schemas)
  batchRoute(app, router, schemas)
  sessionRoutes(app, sessions, schemas)
  await registerCompat(app, { router, admission, runners, sessions, config })
  healthRoutes(app, runners)
  infoRoute(app, runners, schemas)
  metricsRoute(app, [metrics.registry, ...(options.registries ?? [])])
  docsRoutes(app)

  app.addHook('onReady', () => runners.start())
  app.addHook('onClose', () => runners.close())
  return { app, runners, router, admission, metrics, sessions, tenants, quotas }
}

/**
 * The compatible APIs on the gateway's own path: every call admitted (an overloaded gateway
 * answers `overloaded`, which each API maps to its own retriable answer), routed and retried.
 */
async function registerCompat (app: FastifyInstance, parts: { router: Router, admission: Admission, runners: RunnerSet, sessions: FleetSessions, config: GatewayConfig }): Promise<void> {
  const { router, admission, runners, sessions, config } = parts
  const overloaded = (): ExecResult => failedResult('overloaded', 'SF_ERR_GATEWAY_OVERLOADED', `the gateway holds ${admission.inFlight} calls (limit ${admission.limit}); retry later`)
  // Held to the deployment's limits as the /v1 routes are (their schemas), after each API's own mapping.
  const execute = withinLimits(async (request) => await admitted(admission, 1, () => router.execute(request), overloaded), config)
  const executeBatch = batchWithinLimits(async (requests) =>
    await admitted(admission, requests.length, () => router.executeBatch(requests), () => requests.map(overloaded)), config)
  // Sessions of a caller: bound to its API key, like those of /v1/sessions.
  const sessionsOf = (key: string): CompatSessions => sessionsWithinLimits({
    create: async (options) => (await sessions.create(options, key)).session_id,
    execute: async (id, cell) => await admitted(admission, 1, () => sessions.execute(id, cell, key), overloaded),
    close: async (id) => { await sessions.close(id, key).catch(() => {}) }
  }, config)
  // /run_jupyter opens and closes its session within one request: no caller can reach it.
  const compatSessions = sessionsOf('')
  // code-judge's workers run Python: the JavaScript pools are not counted.
  const status = (): { queue: number, num_workers: number } => {
    let queue = 0
    let workers = 0
    for (const m of runners.members) {
      if (!m.routable || m.load === null) continue
      const python = m.load.pools?.python
      queue += python?.queued ?? m.load.queued
      workers += python?.capacity ?? m.load.capacity
    }
    return { queue, num_workers: workers }
  }
  const codeJudgeLimits = { timeoutMs: config.codeJudgeTimeoutMs, memoryMb: config.codeJudgeMemoryMb, stdoutChars: config.codeJudgeStdoutChars }
  await app.register(sandboxFusionCompat, { execute, sessions: compatSessions, maxTimeoutMs: config.maxTimeoutMs })
  await app.register(codeJudgeCompat, { execute, executeBatch, status, limits: codeJudgeLimits })
  await app.register(mcpCompat, { execute, sessionsFor: (request) => sessionsOf(callerKey(request)), limits: { maxTimeoutMs: config.maxTimeoutMs } })
}
