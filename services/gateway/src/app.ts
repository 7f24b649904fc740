/**
 * Builds the gateway's Fastify instance without listening (tests use `inject()`):
 * auth → validation (one schema) → admission → route to the least loaded runner → retries.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import type { Registry } from 'prom-client'
import type { GatewayConfig } from './config.ts'
import { GatewayMetrics } from './metrics.ts'
import { Admission, installAdmission } from './plugins/admission.ts'
import { installAuth } from './plugins/auth.ts'
import { installErrorShape } from './plugins/error-shape.ts'
import { batchRoute } from './routes/batch.ts'
import { docsRoutes } from './routes/docs.ts'
import { executeRoute } from './routes/execute.ts'
import { healthRoutes } from './routes/health.ts'
import { metricsRoute } from './routes/metrics.ts'
import { Router, type AffinityHook } from './runners/router.ts'
import type { RunnerClient } from './runners/runner-client.ts'
import { RunnerSet } from './runners/runner-set.ts'
import { routeSchemas } from './schemas.ts'

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
}

/** The gateway app, with its parts reachable for tests and the CLI. */
export interface GatewayApp {
  app: FastifyInstance
  runners: RunnerSet
  router: Router
  admission: Admission
  metrics: GatewayMetrics
}

/** Builds the app; `app.ready()` discovers the runners and polls their load once. */
export async function buildGatewayApp (options: GatewayOptions): Promise<GatewayApp> {
  const { config } = options
  const app: FastifyInstance = Fastify({
    ...(options.logger === undefined
      ? { logger: { level: config.logLevel } }
      : options.logger === false ? { logger: false } : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    return503OnClosing: true,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false } }
  })
  const runners = new RunnerSet({
    clients: options.clients ?? [],
    urls: config.runners,
    dns: config.runnersDns,
    dnsRefreshMs: config.dnsRefreshMs,
    loadPollMs: config.loadPollMs,
    connections: config.runnerConnections,
    graceMs: config.callGraceMs,
    logger: app.log
  })
  const router = new Router(runners, {
    maxAttempts: config.maxAttempts,
    callGraceMs: config.callGraceMs,
    maxSubBatchItems: config.maxSubBatchItems,
    ...(options.affinity === undefined ? {} : { affinity: options.affinity })
  })
  const metrics = new GatewayMetrics(runners)
  router.observe(metrics.record)
  const admission = new Admission(config.maxInFlight)
  metrics.inFlightNow = () => admission.inFlight
  const schemas = routeSchemas(config)

  // Only JSON bodies: a text/plain body is a 415 naming the media type, never a string
  // that fails the schema with a confusing message.
  app.removeContentTypeParser('text/plain')
  installErrorShape(app, metrics)
  installAuth(app, config.apiKeys)
  installAdmission(app, admission, config.retryAfterS)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'sandfleet', version: '0.1.0', description: 'Sandboxed code execution for agentic RL: one tool call from HTTP to a warm, isolated sandbox and back.' },
      ...(config.apiKeys.length > 0 ? { components: { securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } } }, security: [{ apiKey: [] }] } : {})
    }
  })
  executeRoute(app, router, schemas)
  batchRoute(app, router, schemas)
  healthRoutes(app, runners)
  metricsRoute(app, [metrics.registry, ...(options.registries ?? [])])
  docsRoutes(app)

  app.addHook('onReady', () => runners.start())
  app.addHook('onClose', () => runners.close())
  return { app, runners, router, admission, metrics }
}
