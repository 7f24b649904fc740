/**
 * Bad input, answered the way the FastAPI services we imitate answer it: HTTP 422 with
 * `{"detail": [{type, loc, msg, input, ctx?}]}` (pydantic v2's error items). Their clients parse
 * that shape, so the compat routes keep it instead of sandfleet's own 400 body.
 *
 * Fields are checked with pydantic's default ("lax") coercions: `"5"` is a valid number,
 * `5.0` a valid integer; unknown fields are ignored, as pydantic ignores them.
 */

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** One pydantic validation error item. */
export interface FastapiErrorItem {
  type: string
  loc: Array<string | number>
  msg: string
  input: unknown
  ctx?: Record<string, unknown>
}

/** The 422 body. */
export interface FastapiErrorBody {
  detail: FastapiErrorItem[]
}

/** HTTP status of a validation failure. */
export const UNPROCESSABLE = 422

/** The kind of one field. `literal` lists the accepted strings. */
export type FieldKind =
  | { kind: 'string' }
  | { kind: 'number' }
  | { kind: 'integer' }
  | { kind: 'string_map' }
  | { kind: 'string_list' }
  | { kind: 'list' }
  | { kind: 'literal'; values: readonly string[] }

/**
 * A field of a request model: its kind, whether it must be present / may be null, and what it means (for the API
 * document).
 */
export type FieldSpec = FieldKind & { required?: boolean; nullable?: boolean; description?: string }

/** A request model: field name → spec. */
export type ModelSpec = Readonly<Record<string, FieldSpec>>

/** Formats accepted literals as pydantic does: `'a', 'b' or 'c'`. */
export function expectedList(values: readonly string[]): string {
  const quoted = values.map((v) => `'${v}'`)
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted[quoted.length - 1]}`
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function checkField(value: unknown, spec: FieldSpec, loc: Array<string | number>, out: FastapiErrorItem[]): void {
  if (value === null && spec.nullable === true) return
  switch (spec.kind) {
    case 'string':
      if (typeof value !== 'string')
        out.push({ type: 'string_type', loc, msg: 'Input should be a valid string', input: value })
      return
    case 'number':
      if (toNumber(value) === undefined)
        out.push({ type: 'float_type', loc, msg: 'Input should be a valid number', input: value })
      return
    case 'integer': {
      const n = toNumber(value)
      if (n === undefined || !Number.isInteger(n))
        out.push({ type: 'int_type', loc, msg: 'Input should be a valid integer', input: value })
      return
    }
    case 'string_map':
      if (!isPlainObject(value)) {
        out.push({ type: 'dict_type', loc, msg: 'Input should be a valid dictionary', input: value })
        return
      }
      for (const [k, v] of Object.entries(value)) {
        if (typeof v !== 'string' && !(v === null && spec.nullable === true))
          out.push({ type: 'string_type', loc: [...loc, k], msg: 'Input should be a valid string', input: v })
      }
      return
    case 'string_list':
    case 'list':
      if (!Array.isArray(value)) {
        out.push({ type: 'list_type', loc, msg: 'Input should be a valid list', input: value })
        return
      }
      if (spec.kind === 'string_list') {
        value.forEach((v, i) => {
          if (typeof v !== 'string')
            out.push({ type: 'string_type', loc: [...loc, i], msg: 'Input should be a valid string', input: v })
        })
      }
      return
    case 'literal':
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        const expected = expectedList(spec.values)
        out.push({ type: 'literal_error', loc, msg: `Input should be ${expected}`, input: value, ctx: { expected } })
      }
  }
}

/** A number in pydantic's lax sense (a finite number, or a string that parses as one). */
export function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

/**
 * Checks `input` against `model`; returns the error items (empty when valid). `loc` is the
 * location of `input` itself (`['body']` for a request body).
 */
export function validateModel(
  input: unknown,
  model: ModelSpec,
  loc: Array<string | number> = ['body']
): FastapiErrorItem[] {
  const out: FastapiErrorItem[] = []
  if (input === undefined) {
    out.push({ type: 'missing', loc, msg: 'Field required', input: null })
    return out
  }
  if (!isPlainObject(input)) {
    out.push({
      type: 'model_attributes_type',
      loc,
      msg: 'Input should be a valid dictionary or object to extract fields from',
      input
    })
    return out
  }
  for (const [name, spec] of Object.entries(model)) {
    const value = input[name]
    if (value === undefined) {
      if (spec.required === true) out.push({ type: 'missing', loc: [...loc, name], msg: 'Field required', input })
      continue
    }
    checkField(value, spec, [...loc, name], out)
  }
  return out
}

/** JSON Schema of one field kind, as FastAPI's own document gives it (lax coercions are not spelled out). */
function kindSchema(spec: FieldSpec): Record<string, unknown> {
  switch (spec.kind) {
    case 'string':
      return { type: 'string' }
    case 'number':
      return { type: 'number' }
    case 'integer':
      return { type: 'integer' }
    case 'string_map':
      return {
        type: 'object',
        additionalProperties: spec.nullable === true ? { type: ['string', 'null'] } : { type: 'string' }
      }
    case 'string_list':
      return { type: 'array', items: { type: 'string' } }
    case 'list':
      return { type: 'array' }
    case 'literal':
      return { type: 'string', enum: [...spec.values] }
  }
}

/**
 * The JSON Schema of a request model, for the API document (the routes validate with
 * {@link validateModel}, not with it). `items` gives the schema of a `list` field's items.
 * Unknown fields stay allowed: pydantic ignores them.
 */
export function modelSchema(
  model: ModelSpec,
  title: string,
  items: Readonly<Record<string, unknown>> = {}
): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(model)) {
    const schema = kindSchema(spec)
    if (items[name] !== undefined) schema.items = items[name]
    const typed = spec.nullable === true ? { anyOf: [schema, { type: 'null' }] } : schema
    properties[name] = spec.description === undefined ? typed : { ...typed, description: spec.description }
  }
  const required = Object.entries(model)
    .filter(([, spec]) => spec.required === true)
    .map(([name]) => name)
  return { title, type: 'object', properties, required }
}

/**
 * A compat route's parse stage, as its `preValidation` hook: the body checked by `check` (its
 * model's {@link validateModel}, and what else the imitated service refuses as a 422); a body it
 * refuses is answered 422 with the items, before the pipeline's stages see it. The route's
 * handler and its declared calls then meet only bodies of its model.
 */
export function modelBody(
  check: (body: unknown) => FastapiErrorItem[]
): (request: FastifyRequest, reply: FastifyReply, done: () => void) => void {
  return (request, reply, done) => {
    const detail = check(request.body)
    if (detail.length > 0) {
      void reply.code(UNPROCESSABLE).send({ detail })
      return
    }
    done()
  }
}

/** The 422 body for a request body that is not JSON. */
export function jsonInvalid(message: string): FastapiErrorBody {
  return {
    detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', input: {}, ctx: { error: message } }]
  }
}

/** The 422 body for a value the fleet refused after the model accepted it (a configured limit). */
export function valueError(field: string, message: string, input: unknown): FastapiErrorBody {
  return {
    detail: [
      { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: message } }
    ]
  }
}

/**
 * The 422 body for a literal the model takes but the fleet does not serve now (a language no runner judges): pydantic's
 * `literal_error` at `loc`, listing the values the fleet does take.
 */
export function literalError(loc: Array<string | number>, values: readonly string[], input: unknown): FastapiErrorBody {
  const expected = expectedList(values)
  return { detail: [{ type: 'literal_error', loc, msg: `Input should be ${expected}`, input, ctx: { expected } }] }
}

/**
 * Answers errors raised before a compat handler runs (a body that is not JSON, an empty body)
 * with FastAPI's 422 shape; other errors keep their status with a `detail` string, as FastAPI's
 * HTTPException does. Install it inside the compat plugin's own (encapsulated) context.
 */
export function installFastapiErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      err instanceof SyntaxError
    ) {
      return reply.code(UNPROCESSABLE).send(jsonInvalid(err.message))
    }
    const statusCode = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500
    if (statusCode >= 500) request.log.error({ err }, 'compat handler failed')
    return reply.code(statusCode).send({ detail: statusCode >= 500 ? 'Internal Server Error' : err.message })
  })
}
