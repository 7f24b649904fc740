/**
 * Errors of `@sandfleet/trainer`. Each has a stable `SF_ERR_TRAINER_…` code (docs/errors.md), a
 * message, the HTTP status a caller would see and a `cause`. Tool failures are never thrown: they
 * go back to the model as tool-result text and are recorded by status; these errors are for the
 * inference engine and the caller's own input.
 */

/** Every error code this package produces. */
export const TRAINER_ERROR_CODES = {
  /** The inference engine answered with a non-2xx HTTP status. */
  ENGINE_HTTP: 'SF_ERR_TRAINER_ENGINE_HTTP',
  /** The inference engine could not be reached (refused, reset, timed out). */
  ENGINE_CONNECTION: 'SF_ERR_TRAINER_ENGINE_CONNECTION',
  /** The inference engine's answer lacked what the adapter needs (token ids, logprobs, choices). */
  ENGINE_BAD_RESPONSE: 'SF_ERR_TRAINER_ENGINE_BAD_RESPONSE',
  /** The episode's AbortSignal fired. */
  ABORTED: 'SF_ERR_TRAINER_ABORTED',
  /** A dataset line or an option is not what the trainer expects. */
  BAD_INPUT: 'SF_ERR_TRAINER_BAD_INPUT'
} as const

/** One of {@link TRAINER_ERROR_CODES}. */
export type TrainerErrorCode = (typeof TRAINER_ERROR_CODES)[keyof typeof TRAINER_ERROR_CODES]

/** An error thrown by the trainer library; `code` is stable. */
export class TrainerError extends Error {
  /** Stable `SF_ERR_TRAINER_…` code. */
  readonly code: TrainerErrorCode
  /** The HTTP status this error corresponds to (the engine's own status for `ENGINE_HTTP`). */
  readonly statusCode: number

  /** Builds an error; `cause` keeps the underlying failure. */
  constructor(code: TrainerErrorCode, message: string, statusCode: number, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'TrainerError'
    this.code = code
    this.statusCode = statusCode
  }
}
