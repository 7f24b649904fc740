/**
 * Route schemas: the protocol's schemas, compiled once per app by Fastify's validator (the parse
 * stage of the pipeline: the contract's shape and bounds) and given to the OpenAPI document. The
 * deployment's limits are not in them: the pipeline's limits stage holds every route's calls to
 * those (pipeline/call-limits.ts). A `timeout_ms` left out takes the deployment's default.
 */
import {
  BatchRequestSchema, BatchResponseSchema, BatchStreamLineSchema, ErrorBodySchema, ExecRequestSchema,
  ExecResultSchema, GatewayInfoSchema, RunnerLoadSchema, SessionCreateRequestSchema, SessionExecRequestSchema, SessionInfoSchema, timeoutMsOf
} from '@sandfleet/protocol'
import type { GatewayConfig } from './config.ts'

type Json = Record<string, unknown>

/**
 * Deep copy with each `$id` turned into a `title`, so one schema can sit inside many routes and
 * the API document still names it (routes/openapi-components.ts).
 */
export function plain<T> (schema: T): Json {
  return JSON.parse(JSON.stringify(schema, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !('$id' in value)) return value
    const { $id, ...rest } = value as Json
    return typeof rest.title === 'string' ? rest : { title: $id, ...rest }
  })) as Json
}

/** What of a deployment's settings the route schemas say: its longest call, whose default a `timeout_ms` left out takes. */
export type RouteLimits = Pick<GatewayConfig, 'maxTimeoutMs'>

/** Schemas of every gateway route. */
export interface RouteSchemas {
  execRequest: Json
  execResult: Json
  batchRequest: Json
  batchResponse: Json
  batchStreamLine: Json
  errorBody: Json
  runnerLoad: Json
  gatewayInfo: Json
  sessionCreate: Json
  sessionExec: Json
  sessionInfo: Json
}

/** `schema`'s `timeout_ms` defaulting to the deployment's default (a request that gives none is within its limit). */
function deploymentDefault (schema: Json, maxTimeoutMs: number): Json {
  const props = schema.properties as Record<string, Json>
  props.timeout_ms = { ...props.timeout_ms, default: timeoutMsOf({}, maxTimeoutMs) }
  return schema
}

/** Builds the route schemas for these settings. */
export function routeSchemas (limits: RouteLimits): RouteSchemas {
  const execRequest = deploymentDefault(plain(ExecRequestSchema), limits.maxTimeoutMs)
  const batchRequest = plain(BatchRequestSchema)
  const requests = (batchRequest.properties as Record<string, Json>).requests
  requests.items = execRequest
  return {
    sessionCreate: plain(SessionCreateRequestSchema),
    sessionExec: deploymentDefault(plain(SessionExecRequestSchema), limits.maxTimeoutMs),
    sessionInfo: plain(SessionInfoSchema),
    execRequest,
    execResult: plain(ExecResultSchema),
    batchRequest,
    batchResponse: plain(BatchResponseSchema),
    batchStreamLine: plain(BatchStreamLineSchema),
    errorBody: plain(ErrorBodySchema),
    runnerLoad: plain(RunnerLoadSchema),
    gatewayInfo: plain(GatewayInfoSchema)
  }
}
