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
  /** The schema of the object at fault (ajv's `verbose` errors): an unknown field's known neighbours. */
  readonly parentSchema?: unknown
}

/** Edits (insert, delete, replace a character) from `a` to `b`. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]
}

/**
 * The known field an unknown `name` most likely meant: one it is the start of (`timeout` → `timeout_ms`), or the
 * nearest within a third of its length in edits (`langauge` → `language`); undefined when none is near.
 */
export function closestField(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase()
  const prefixed = known.filter((k) => k.toLowerCase().startsWith(lower) || lower.startsWith(k.toLowerCase()))
  if (prefixed.length > 0) return prefixed.sort((a, b) => a.length - b.length)[0]
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(name.length / 3)) + 1
  for (const k of known) {
    const d = distance(lower, k.toLowerCase())
    if (d < bestDistance) [best, bestDistance] = [k, d]
  }
  return best
}

/** The properties `schema` names, when it is an object schema. */
function propertiesOf(schema: unknown): string[] {
  const properties = (schema as { properties?: unknown } | null)?.properties
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : []
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
  const params = e.params as { allowedValues?: unknown[]; additionalProperty?: unknown }
  if (e.keyword === 'additionalProperties') {
    const meant = closestField(String(params.additionalProperty ?? ''), propertiesOf(e.parentSchema))
    message = meant === undefined ? 'is not a known field' : `is not a known field (did you mean ${meant}?)`
  } else if (e.keyword === 'required') message = 'is required'
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
