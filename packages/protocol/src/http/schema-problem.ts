/**
 * What a schema validation error says, as the edge answers it: the field at fault (a JSON path
 * without the leading slash) and one line about it. Fastify validates with ajv; an ajv error
 * names the object that holds a missing or unknown property, and the property in its params.
 */

/** What it reads of an ajv error (Fastify's `FastifySchemaValidationError`). */
export interface SchemaError {
  readonly keyword: string
  readonly instancePath: string
  readonly params: Record<string, unknown>
  readonly message?: string
}

/** The field and the line of the first problem of a failed validation. */
export interface SchemaProblem {
  /** JSON path of the field at fault (`requests/3/timeout_ms`); '' for the whole value. */
  readonly field: string
  /** `timeout_ms must be integer`, `extra is not a known field`, `language must be one of "python", "javascript"`. */
  readonly message: string
}

/**
 * The JSON path (no leading slash) of the field an ajv error is about: the missing or unknown property itself, not the
 * object that holds it.
 */
export function fieldOf(e: SchemaError): string {
  const path = e.instancePath.replace(/^\//, '')
  const params = e.params as { missingProperty?: string; additionalProperty?: string }
  const child = params.missingProperty ?? params.additionalProperty
  if (child === undefined) return path
  return path === '' ? child : `${path}/${child}`
}

/**
 * The first of `errors`, as the field and a line that starts with it (`dataVar`, `body` or `params`, for the whole
 * value).
 */
export function schemaProblem(errors: readonly SchemaError[], dataVar: string): SchemaProblem {
  const e = errors[0]
  if (e === undefined) return { field: '', message: `invalid ${dataVar}` }
  const field = fieldOf(e)
  let message = e.message ?? 'is invalid'
  const params = e.params as { allowedValues?: unknown[] }
  if (e.keyword === 'additionalProperties') message = 'is not a known field'
  else if (e.keyword === 'required') message = 'is required'
  else if (e.keyword === 'const' || e.keyword === 'anyOf') {
    // a union of literals (language, …): say what is allowed, once
    const allowed = errors
      .filter((x) => x.instancePath === e.instancePath && x.keyword === 'const')
      .map((x) => JSON.stringify((x.params as { allowedValue?: unknown }).allowedValue))
    if (allowed.length > 0) message = `must be one of ${allowed.join(', ')}`
  } else if (params.allowedValues !== undefined)
    message = `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
  return { field, message: `${field === '' ? dataVar : field} ${message}` }
}
