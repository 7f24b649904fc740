/** Batches: many {@link ExecRequest}s in one HTTP call, results in order or streamed. */
import { Type, type Static } from '@sinclair/typebox'
import { ExecRequestSchema, ExecResultSchema, LIMITS } from './exec.ts'

/** Schema of {@link BatchRequest}. */
export const BatchRequestSchema = Type.Object(
  {
    requests: Type.Array(ExecRequestSchema, { minItems: 1, maxItems: LIMITS.maxBatchItems })
  },
  { $id: 'BatchRequest', additionalProperties: false }
)
/** `POST /v1/execute/batch` body. */
export type BatchRequest = Static<typeof BatchRequestSchema>

/** Schema of {@link BatchResponse}. */
export const BatchResponseSchema = Type.Object(
  {
    results: Type.Array(ExecResultSchema)
  },
  { $id: 'BatchResponse' }
)
/** `POST /v1/execute/batch` answer: one result per request, in request order. */
export type BatchResponse = Static<typeof BatchResponseSchema>

/** Schema of {@link BatchStreamLine}. */
export const BatchStreamLineSchema = Type.Object(
  {
    index: Type.Integer({ minimum: 0 }),
    result: ExecResultSchema
  },
  { $id: 'BatchStreamLine' }
)
/**
 * One line of a streamed batch (`Accept: application/x-ndjson`): sent as soon as that item
 * finishes, so lines arrive in completion order; `index` is the item's place in `requests`.
 */
export type BatchStreamLine = Static<typeof BatchStreamLineSchema>

/** Media type of a streamed batch. */
export const NDJSON = 'application/x-ndjson'
