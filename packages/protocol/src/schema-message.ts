/** The words for a value that does not fit its schema, for configuration errors. */
import type { ValueError } from '@sinclair/typebox/value'

/**
 * `error` as a person acts on it: a choice among literals names the choices (`must be one of
 * auto, socket, attach`, where TypeBox says `Expected union value`); anything else keeps
 * TypeBox's message.
 */
export function schemaErrorMessage (error: ValueError): string {
  const choices = (error.schema as { anyOf?: unknown }).anyOf
  if (Array.isArray(choices) && choices.length > 0 && choices.every((s) => typeof s === 'object' && s !== null && 'const' in s)) {
    return `must be one of ${choices.map((s: { const: unknown }) => String(s.const)).join(', ')}`
  }
  return error.message
}
