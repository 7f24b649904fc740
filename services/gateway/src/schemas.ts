/**
 * Route schemas: the protocol's schemas, compiled once per app by Fastify's validator (the parse
 * stage of the pipeline: the contract's shape and bounds) and given to the OpenAPI document. The
 * deployment's limits are said in the fields' descriptions, not checked by them: the pipeline's
 * limits stage holds every route's calls to those (pipeline/call-limits.ts). A `timeout_ms` left
 * out takes the deployment's default.
 */
import {
  BatchRequestSchema,
  BatchResponseSchema,
  BatchStreamLineSchema,
  ErrorBodySchema,
  ExecRequestSchema,
  ExecResultSchema,
  GatewayInfoSchema,
  JUDGE_LIMITS,
  JudgeBatchRequestSchema,
  JudgeBatchResponseSchema,
  JudgeBatchStreamLineSchema,
  JudgeRequestSchema,
  JudgeResultSchema,
  RunnerLoadSchema,
  SessionCreateRequestSchema,
  SessionExecRequestSchema,
  SessionInfoSchema,
  timeoutMsOf
} from '@sandfleet/protocol'
import type { GatewayConfig } from './config.ts'

type Json = Record<string, unknown>

/**
 * Deep copy with each `$id` turned into a `title`, so one schema can sit inside many routes and
 * the API document still names it (routes/openapi-components.ts).
 */
export function plain<T>(schema: T): Json {
  return JSON.parse(
    JSON.stringify(schema, (_key, value: unknown) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !('$id' in value)) return value
      const { $id, ...rest } = value as Json
      return typeof rest.title === 'string' ? rest : { title: $id, ...rest }
    })
  ) as Json
}

/** The deployment's limits the route schemas describe (`maxTimeoutMs` also gives the default of `timeout_ms`). */
export type RouteLimits = Pick<GatewayConfig, 'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb' | 'maxBatchItems'>

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
  judgeRequest: Json
  judgeResult: Json
  judgeBatchRequest: Json
  judgeBatchResponse: Json
  judgeBatchStreamLine: Json
}

/** `field` with the deployment's limit on it said in its description. */
function said(field: Json, limit: string): Json {
  const limited = `at most ${limit} on this deployment`
  return {
    ...field,
    description: typeof field.description === 'string' ? `${field.description}; ${limited}` : limited.replace('a', 'A')
  }
}

/**
 * `schema` (a request's) with the deployment's limits said on its fields, and its `timeout_ms` defaulting to the
 * deployment's default.
 */
function deploymentFields(schema: Json, limits: RouteLimits): Json {
  const props = schema.properties as Record<string, Json>
  if (props.code !== undefined) props.code = said(props.code, `${limits.maxCodeBytes} UTF-8 bytes (maxCodeBytes)`)
  if (props.timeout_ms !== undefined)
    props.timeout_ms = {
      ...said(props.timeout_ms, `${limits.maxTimeoutMs} (maxTimeoutMs)`),
      default: timeoutMsOf({}, limits.maxTimeoutMs)
    }
  if (props.memory_mb !== undefined) props.memory_mb = said(props.memory_mb, `${limits.maxMemoryMb} (maxMemoryMb)`)
  return schema
}

/**
 * A judge request's schema with the deployment's limits said on its fields; its time limits default to the contract's
 * (a test 4 s, the compile 10 s), or `maxTimeoutMs` when that is less.
 */
function judgeFields(schema: Json, limits: RouteLimits): Json {
  const props = schema.properties as Record<string, Json>
  props.code = said(props.code as Json, `${limits.maxCodeBytes} UTF-8 bytes (maxCodeBytes)`)
  const timeLimit = (field: Json, contract: number): Json => ({
    ...said(field, `${limits.maxTimeoutMs} (maxTimeoutMs)`),
    default: Math.min(contract, limits.maxTimeoutMs)
  })
  props.timeout_ms = timeLimit(props.timeout_ms as Json, JUDGE_LIMITS.defaultTimeoutMs)
  props.compile_timeout_ms = timeLimit(props.compile_timeout_ms as Json, JUDGE_LIMITS.defaultCompileTimeoutMs)
  props.memory_mb = {
    ...said(props.memory_mb as Json, `${limits.maxMemoryMb} (maxMemoryMb)`),
    default: Math.min(JUDGE_LIMITS.defaultMemoryMb, limits.maxMemoryMb)
  }
  // a default inside a union is never applied (ajv's strict mode refuses it): a stdin left out is the runner's ''
  for (const form of ((props.tests as Json).items as Json).anyOf as Json[]) {
    const stdin = (form.properties as Record<string, Json>).stdin
    if (stdin !== undefined) delete stdin.default
  }
  return schema
}

/** Builds the route schemas for these settings. */
export function routeSchemas(limits: RouteLimits): RouteSchemas {
  const execRequest = deploymentFields(plain(ExecRequestSchema), limits)
  const batchRequest = plain(BatchRequestSchema)
  const props = batchRequest.properties as Record<string, Json>
  props.requests = said({ ...props.requests, items: execRequest }, `${limits.maxBatchItems} items (maxBatchItems)`)
  const judgeRequest = judgeFields(plain(JudgeRequestSchema), limits)
  const judgeBatchRequest = plain(JudgeBatchRequestSchema)
  const judgeProps = judgeBatchRequest.properties as Record<string, Json>
  judgeProps.requests = said(
    { ...judgeProps.requests, items: judgeRequest },
    `${limits.maxBatchItems} items (maxBatchItems)`
  )
  return {
    judgeRequest,
    judgeResult: plain(JudgeResultSchema),
    judgeBatchRequest,
    judgeBatchResponse: plain(JudgeBatchResponseSchema),
    judgeBatchStreamLine: plain(JudgeBatchStreamLineSchema),
    sessionCreate: deploymentFields(plain(SessionCreateRequestSchema), limits),
    sessionExec: deploymentFields(plain(SessionExecRequestSchema), limits),
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
