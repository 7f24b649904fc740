/**
 * Errors in one shape, the way fastify's `createError` makes them: each package's registry maps
 * a stable `SF_ERR_…` code to the HTTP status a caller sees, the protocol status of its
 * {@link ErrorBody} and a default message; an error made from the registry carries all three
 * and turns into that ErrorBody. Codes are documented in docs/errors.md.
 */
import type { ErrorBody } from '../errors.ts'
import type { Status } from '../status.ts'

/** What one error code means on the wire. */
export interface ErrorSpec {
  /** HTTP status of the response that carries it. */
  readonly statusCode: number
  /** The protocol status of its ErrorBody (or of a result's, when a job is answered with it). */
  readonly status: Status
  /** The default message: one line, for docs/errors.md, logs, and a throw that gives none. */
  readonly message: string
}

/** A package's error codes and what each means. A retired code is never reused. */
export type ErrorRegistry<Code extends string = string> = Readonly<Record<Code, ErrorSpec>>

/**
 * The ErrorBody of `code`: the registry's status, `message` (default: the registry's) and the field at fault, when
 * there is one.
 */
export function errorBody<Code extends string>(
  registry: ErrorRegistry<Code>,
  code: Code,
  message?: string,
  field?: string
): ErrorBody {
  const spec = registry[code]
  const body: ErrorBody = { status: spec.status, error: { code, message: message ?? spec.message } }
  if (field !== undefined && field !== '') body.error.field = field
  return body
}

/** Options of a {@link RegisteredError}. */
export interface RegisteredErrorOptions {
  /** The error that led to it. */
  cause?: unknown
  /** The request field at fault, as a JSON path without the leading slash (`requests/3/timeout_ms`). */
  field?: string
}

/** An error of a registry: its code, HTTP status and protocol status, and its ErrorBody. */
export class RegisteredError<Code extends string = string> extends Error {
  /** Stable `SF_ERR_…` code. */
  readonly code: Code
  /** HTTP status a caller sees for it. */
  readonly statusCode: number
  /** Protocol status of its ErrorBody. */
  readonly status: Status
  /** The request field at fault, when there is one. */
  readonly field: string | undefined

  constructor(registry: ErrorRegistry<Code>, code: Code, message?: string, options: RegisteredErrorOptions = {}) {
    const spec = registry[code]
    super(message ?? spec.message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.statusCode = spec.statusCode
    this.status = spec.status
    this.field = options.field
  }

  /** The wire shape of this error. */
  toBody(): ErrorBody {
    const body: ErrorBody = { status: this.status, error: { code: this.code, message: this.message } }
    if (this.field !== undefined && this.field !== '') body.error.field = this.field
    return body
  }
}
