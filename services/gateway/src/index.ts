/**
 * sandfleet's gateway: the public HTTP API (execute, batch, health, metrics, OpenAPI docs),
 * admission and routing to runners by their reported load.
 *
 * @example
 * ```ts
 * import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
 * const config = loadGatewayConfig({ values: { runners: ['http://127.0.0.1:8081'] } })
 * const { app } = await buildGatewayApp({ config })
 * await app.listen({ host: config.host, port: config.port })
 * ```
 */
export * from './app.ts'
export * from './config.ts'
export * from './errors.ts'
export * from './metrics.ts'
export * from './main.ts'
export * from './pipeline/admission.ts'
export * from './runners/runner-client.ts'
export * from './runners/http-runner-client.ts'
export * from './runners/in-process-runner-client.ts'
export * from './runners/runner-set.ts'
export * from './runners/router.ts'
export * from './sessions/fleet-sessions.ts'
