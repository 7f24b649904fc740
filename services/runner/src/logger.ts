/**
 * The logger the runner writes to: a subset of pino's interface, so a Fastify/pino logger
 * fits as is. The runner never decides where logs go; hot paths count through metrics instead.
 */

/** One log method: structured fields first, then the message (pino's order). */
export type LogFn = (fields: Record<string, unknown>, message?: string) => void

/** What the runner needs of a logger. */
export interface Logger {
  debug: LogFn
  info: LogFn
  warn: LogFn
  error: LogFn
}

const noop: LogFn = () => {}

/** A logger that drops everything (the default of library use). */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop })
