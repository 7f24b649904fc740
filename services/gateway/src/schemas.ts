/**
 * Route schemas: the protocol's schemas with the deployment's limits applied (never looser than
 * the contract's), compiled once per app by Fastify's validator and given to the OpenAPI document.
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

/** The limits a deployment configures. */
export type RouteLimits = Pick<GatewayConfig, 'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb' | 'maxBatchItems'>

/** Schemas of every gateway route, limits applied. */
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

/** A `timeout_ms` schema at most `max`, its default too (a request that gives none is within the limit). */
function timeoutWithin (schema: Json, max: number): Json {
  return { ...schema, maximum: Math.min(Number(schema.maximum), max), default: timeoutMsOf({}, max) }
}

/** Builds the route schemas for these limits. */
export function routeSchemas (limits: RouteLimits): RouteSchemas {
  const execRequest = plain(ExecRequestSchema)
  const props = execRequest.properties as Record<string, Json>
  // maxLength counts characters and a string has at least as many UTF-8 bytes: a `code` of more
  // characters is over maxCodeBytes for sure (the runner, given the same limit, counts its bytes).
  props.code = { ...props.code, maxLength: limits.maxCodeBytes }
  props.timeout_ms = timeoutWithin(props.timeout_ms, limits.maxTimeoutMs)
  props.memory_mb = { ...props.memory_mb, maximum: Math.min(Number(props.memory_mb.maximum), limits.maxMemoryMb) }
  const batchRequest = plain(BatchRequestSchema)
  const requests = (batchRequest.properties as Record<string, Json>).requests
  requests.items = execRequest
  requests.maxItems = Math.min(Number(requests.maxItems), limits.maxBatchItems)
  const sessionCreate = plain(SessionCreateRequestSchema)
  const createProps = sessionCreate.properties as Record<string, Json>
  createProps.memory_mb = { ...createProps.memory_mb, maximum: Math.min(Number(createProps.memory_mb.maximum), limits.maxMemoryMb) }
  const sessionExec = plain(SessionExecRequestSchema)
  const execProps = sessionExec.properties as Record<string, Json>
  execProps.code = { ...execProps.code, maxLength: limits.maxCodeBytes }
  execProps.timeout_ms = timeoutWithin(execProps.timeout_ms, limits.maxTimeoutMs)
  return {
    sessionCreate,
    sessionExec,
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
