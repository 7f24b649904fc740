/**
 * One error shape everywhere: every non-2xx answer of the gateway is an `ErrorBody`
 * (`{status, error: {code, message, field?}}`), whether it comes from schema validation, the
 * body parser, a 404, admission or an unexpected throw. The edge is `@sandfleet/protocol/http`'s,
 * the runner's too; the gateway gives it its codes, its runner refusals (forwarded as they are),
 * and its count of refusals (a `code` over `maxCodeBytes` is the pipeline's, pipeline/call-limits.ts).
 */
import type { FastifyInstance } from 'fastify'
import { frameworkErrorHandler, installErrorShape as installEdge, type EdgeOptions } from '@sandfleet/protocol/http'
import { GATEWAY_ERRORS, RunnerRefusal, type GatewayErrorCode } from '../errors.ts'
import type { GatewayMetrics } from '../metrics.ts'

/** The codes the gateway's edge answers its faults with. */
const EDGE_CODES = Object.freeze({
  invalidRequest: 'SF_ERR_GATEWAY_INVALID_REQUEST',
  invalidJson: 'SF_ERR_GATEWAY_INVALID_JSON',
  bodyTooLarge: 'SF_ERR_GATEWAY_BODY_TOO_LARGE',
  unsupportedMedia: 'SF_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE',
  notFound: 'SF_ERR_GATEWAY_NOT_FOUND',
  methodNotAllowed: 'SF_ERR_GATEWAY_METHOD_NOT_ALLOWED',
  internal: 'SF_ERR_GATEWAY_INTERNAL'
} as const satisfies EdgeOptions<GatewayErrorCode>['codes'])

/** Fastify's `frameworkErrors`: a URL the router cannot take is a 400 ErrorBody naming `url`. */
export const frameworkError = frameworkErrorHandler({ registry: GATEWAY_ERRORS, codes: EDGE_CODES })

/**
 * Installs the edge's error handler and not-found handler on `app` (call on the root instance,
 * before the routes); each error answered is counted in `sandfleet_gateway_rejected_total` by its code.
 */
export function installErrorShape(
  app: FastifyInstance,
  metrics: GatewayMetrics,
  limits: { maxBodyBytes: number }
): void {
  installEdge(app, {
    registry: GATEWAY_ERRORS,
    codes: EDGE_CODES,
    service: 'gateway',
    maxBodyBytes: limits.maxBodyBytes,
    passThrough: (err) => (err instanceof RunnerRefusal ? err : undefined),
    onAnswer: (code) => {
      metrics.rejected.inc({ reason: code })
    }
  })
}
