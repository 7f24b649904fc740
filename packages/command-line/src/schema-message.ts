/** The names of configuration settings, and the words for a value that does not fit its schema. */
import type { ValueError } from '@sinclair/typebox/value'

/**
 * `error` as a person acts on it: a choice among literals names the choices (`must be one of
 * auto, socket, attach`, where TypeBox says `Expected union value`); anything else keeps
 * TypeBox's message.
 */
export function schemaErrorMessage(error: ValueError): string {
  const choices = (error.schema as { anyOf?: unknown }).anyOf
  if (
    Array.isArray(choices) &&
    choices.length > 0 &&
    choices.every((s) => typeof s === 'object' && s !== null && 'const' in s)
  ) {
    return `must be one of ${choices.map((s: { const: unknown }) => String(s.const)).join(', ')}`
  }
  return error.message
}

/** A setting's environment variable: `maxInFlight` → `SANDFLEET_MAX_IN_FLIGHT`. */
export function configEnvName(key: string): string {
  return 'SANDFLEET_' + key.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase()
}

/** A setting's flag, without `--`: `maxInFlight` → `max-in-flight`. */
export function configFlagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())
}
