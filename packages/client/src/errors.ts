/**
 * Errors of `@sandfleet/client`. Each has a stable `SF_ERR_CLIENT_…` code (docs/errors.md), a
 * message, the HTTP status a caller sees and a `cause`. Fleet and code statuses are never thrown:
 * they arrive as {@link ExecResult}s; these errors are for what has no result to carry it.
 */
import type { ExecResult } from '@sandfleet/protocol'

/** Every error code this package produces. */
export const CLIENT_ERROR_CODES = {
  /** The caller's AbortSignal fired before a result arrived. */
  ABORTED: 'SF_ERR_CLIENT_ABORTED',
  /** The fleet answered 410: the session and its state are gone. */
  SESSION_LOST: 'SF_ERR_CLIENT_SESSION_LOST',
  /** The session was closed by this program (`session.close()`); nothing was sent. */
  SESSION_CLOSED: 'SF_ERR_CLIENT_SESSION_CLOSED',
  /** The client was closed; no new call is accepted. */
  CLOSED: 'SF_ERR_CLIENT_CLOSED',
  /** A connection to the fleet failed (carried as an `infra_error` result, `error.type`). */
  CONNECTION: 'SF_ERR_CLIENT_CONNECTION',
  /** The fleet's answer was not the contract's shape (carried as an `infra_error` result). */
  BAD_RESPONSE: 'SF_ERR_CLIENT_BAD_RESPONSE',
  /** The call's deadline passed while it was in flight (carried as an `infra_error` result). */
  DEADLINE: 'SF_ERR_CLIENT_DEADLINE',
  /** A session could not be created or deleted (the fleet's ErrorBody is the cause). */
  SESSION_REQUEST: 'SF_ERR_CLIENT_SESSION_REQUEST'
} as const

/** One of {@link CLIENT_ERROR_CODES}. */
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[keyof typeof CLIENT_ERROR_CODES]

/** An error thrown by the client; `code` is stable, `statusCode` is what a caller would see over HTTP. */
export class ClientError extends Error {
  /** Stable `SF_ERR_CLIENT_…` code. */
  readonly code: ClientErrorCode
  /** The HTTP status this error corresponds to. */
  readonly statusCode: number
  /** The last result seen, when there was one. */
  readonly result?: ExecResult

  /** Builds an error; `cause` keeps the underlying failure. */
  constructor(
    code: ClientErrorCode,
    message: string,
    statusCode: number,
    options: { cause?: unknown; result?: ExecResult } = {}
  ) {
    super(message, { cause: options.cause })
    this.name = 'ClientError'
    this.code = code
    this.statusCode = statusCode
    if (options.result !== undefined) this.result = options.result
  }
}

/** The caller aborted the call. */
export function abortedError(cause?: unknown): ClientError {
  return new ClientError(CLIENT_ERROR_CODES.ABORTED, 'the call was aborted by its AbortSignal', 499, { cause })
}

/**
 * The session is gone (HTTP 410, status `infra_error`: the fleet's fault, never the code's); its state cannot be
 * recovered: create a new one and run its cells again.
 */
export function sessionLostError(sessionId: string, result?: ExecResult): ClientError {
  return new ClientError(
    CLIENT_ERROR_CODES.SESSION_LOST,
    `session ${sessionId} is lost (HTTP 410, the fleet's fault): its state is gone, create a new session`,
    410,
    result ? { result } : {}
  )
}

/**
 * The caller closed the session and then used it. Nothing was sent; 404 is what the fleet
 * answers for a session it no longer holds (`SF_ERR_SESSION_NOT_FOUND`), not a loss (410).
 */
export function sessionClosedError(sessionId: string): ClientError {
  return new ClientError(
    CLIENT_ERROR_CODES.SESSION_CLOSED,
    `session ${sessionId} was closed by this program (session.close()); create a new session`,
    404
  )
}

/** The client was closed. */
export function closedError(): ClientError {
  return new ClientError(CLIENT_ERROR_CODES.CLOSED, 'the client is closed', 503)
}
