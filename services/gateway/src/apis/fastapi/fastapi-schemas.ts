/**
 * What the compatible APIs' route schemas share: FastAPI's error bodies, and how those schemas
 * are used. A compat route validates its body the way pydantic does (fastapi-errors.ts) and
 * answers what its mapper builds, serialized with `JSON.stringify`; its schemas describe both
 * for the API document (a test holds live answers to them), so Fastify neither validates nor
 * serializes with them.
 */
import { Type, type Static, type TNull, type TSchema, type TUnion, type TUnsafe } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'

/** A string that is one of `values`, as `{type: string, enum}` (what client generators read best). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {}
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

/** `schema` or null. */
export function Nullable<T extends TSchema>(schema: T, options: { description?: string } = {}): TUnion<[T, TNull]> {
  return Type.Union([schema, Type.Null()], options)
}

/** One pydantic v2 validation error item (`FastapiErrorItem`, fastapi-errors.ts). */
export const FastapiErrorItemSchema = Type.Object(
  {
    type: Type.String({
      description: 'pydantic error type: missing, string_type, literal_error, json_invalid, value_error, …'
    }),
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
      description: 'Where the error is: ["body", field, …]'
    }),
    msg: Type.String(),
    input: Type.Unknown({ description: 'The value at fault' }),
    ctx: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
  },
  { title: 'FastapiErrorItem', additionalProperties: false }
)

/** FastAPI's 422 body: `{"detail": [items]}`. */
export const FastapiValidationErrorSchema = Type.Object(
  {
    detail: Type.Array(FastapiErrorItemSchema)
  },
  { title: 'FastapiValidationError', additionalProperties: false }
)

/** FastAPI's HTTPException body: `{"detail": "message"}` (a missing API key, a body too large, …). */
export const FastapiHttpErrorSchema = Type.Object(
  {
    detail: Type.String()
  },
  { title: 'FastapiHttpError', additionalProperties: false }
)

/** The 422 body type. */
export type FastapiValidationError = Static<typeof FastapiValidationErrorSchema>

/** The responses of a compat route besides its 2xx ones: 422 for a body its model refuses, `{detail}` for others. */
export const FASTAPI_ERRORS = Object.freeze({
  422: {
    description: "The body does not fit the request model (or is not JSON): pydantic's error items",
    ...FastapiValidationErrorSchema
  },
  '4xx': {
    description:
      "Refused before the route ran (401 without a valid API key, 429 past the API key's quota, with Retry-After; 413 body too large; 415 not JSON)",
    ...FastapiHttpErrorSchema
  },
  '5xx': { description: 'The gateway failed', ...FastapiHttpErrorSchema }
})

/**
 * Makes the route schemas of `app` (an encapsulated compat plugin) describe its routes only: no validation,
 * `JSON.stringify` answers.
 */
export function describeOnly(app: FastifyInstance): void {
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
}
