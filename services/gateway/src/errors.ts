/**
 * The gateway's errors, each with a stable `SF_ERR_GATEWAY_…` code (documented in
 * docs/errors.md), the HTTP status a caller sees and the protocol status of the error body.
 */
import type { ErrorBody } from '@sandfleet/protocol'
import { RegisteredError, type ErrorRegistry, type RegisteredErrorOptions } from '@sandfleet/protocol/http'

/** Every code the gateway can answer with. A retired code is never reused. */
export const GATEWAY_ERRORS = Object.freeze({
  SF_ERR_GATEWAY_CONFIG: {
    statusCode: 500,
    status: 'infra_error',
    message: 'The gateway configuration is invalid (start-up only)'
  },
  SF_ERR_GATEWAY_INVALID_REQUEST: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'The request body does not match the schema or the configured limits; `field` names the culprit'
  },
  SF_ERR_GATEWAY_INVALID_JSON: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'The request body is not valid JSON, or nests deeper than LIMITS.maxJsonDepth'
  },
  SF_ERR_GATEWAY_BODY_TOO_LARGE: {
    statusCode: 413,
    status: 'invalid_request',
    message: 'The request body is larger than maxBodyBytes (--max-body-bytes); the message gives the limit in bytes'
  },
  SF_ERR_GATEWAY_UNSUPPORTED_MEDIA_TYPE: {
    statusCode: 415,
    status: 'invalid_request',
    message: 'The request body is not application/json'
  },
  SF_ERR_GATEWAY_UNAUTHORIZED: {
    statusCode: 401,
    status: 'invalid_request',
    message: 'An API key is configured and the request did not carry a valid one'
  },
  SF_ERR_GATEWAY_NOT_FOUND: { statusCode: 404, status: 'invalid_request', message: 'No such route' },
  SF_ERR_GATEWAY_METHOD_NOT_ALLOWED: {
    statusCode: 405,
    status: 'invalid_request',
    message: 'The path exists and does not take this method; the Allow header lists those it takes'
  },
  SF_ERR_GATEWAY_OVERLOADED: {
    statusCode: 429,
    status: 'overloaded',
    message:
      'The gateway holds as many calls as admission allows (maxInFlight, or the memory budget admissionMemoryMb); retry after Retry-After seconds'
  },
  SF_ERR_GATEWAY_TENANT_IN_FLIGHT: {
    statusCode: 429,
    status: 'overloaded',
    message:
      "The API key's tenant holds as many calls as its maxInFlight quota allows (a batch counts its items); retry after Retry-After seconds. Other keys are served"
  },
  SF_ERR_GATEWAY_TENANT_RATE: {
    statusCode: 429,
    status: 'overloaded',
    message:
      "The API key's tenant started as many calls as its ratePerSecond quota allows; Retry-After says when its bucket holds enough again. Other keys are served"
  },
  SF_ERR_GATEWAY_NO_RUNNERS: { statusCode: 503, status: 'infra_error', message: 'No runner is ready to take the call' },
  SF_ERR_GATEWAY_RUNNER_UNREACHABLE: {
    statusCode: 502,
    status: 'infra_error',
    message:
      "The runner could not be reached (maybe_ran false: retried on another runner), or dropped the connection under the call (it died: retried on another runner, though it may have run there), or gave no answer within the call's wait (maybe_ran true)"
  },
  SF_ERR_GATEWAY_RUNNER_SILENT: {
    statusCode: 502,
    status: 'infra_error',
    message:
      'The runner answered this gateway nothing for runnerSilenceMs (paused, cut off, stuck) and was marked down; the call may have started there (maybe_ran true) and is not run again while that runner may live'
  },
  SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE: {
    statusCode: 502,
    status: 'infra_error',
    message: 'The runner answered something that is not a result'
  },
  SF_ERR_GATEWAY_CANCELLED: {
    statusCode: 499,
    status: 'infra_error',
    message: 'The caller went away before the call finished'
  },
  SF_ERR_GATEWAY_INTERNAL: {
    statusCode: 500,
    status: 'infra_error',
    message: 'An unexpected error inside the gateway (a bug: see its log)'
  }
} satisfies ErrorRegistry)

/** A gateway error code. */
export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS

/** An error raised by the gateway; it turns into an {@link ErrorBody} at the HTTP edge (`toBody()`). */
export class GatewayError extends RegisteredError<GatewayErrorCode> {
  constructor(code: GatewayErrorCode, message: string, options: RegisteredErrorOptions = {}) {
    super(GATEWAY_ERRORS, code, message, options)
    this.name = 'GatewayError'
  }
}

/**
 * A refusal with a code of another registry, passed to the caller as is: a runner's session
 * error (`SF_ERR_SESSION_LOST` 410, `SF_ERR_SESSION_NOT_FOUND` 404, …) forwarded with its HTTP
 * status and ErrorBody, or one the gateway answers itself with those protocol codes.
 */
export class RunnerRefusal extends Error {
  /** HTTP status of the response. */
  readonly statusCode: number
  /** The body sent. */
  readonly body: ErrorBody

  constructor(statusCode: number, body: ErrorBody) {
    super(body.error.message)
    this.name = 'RunnerRefusal'
    this.statusCode = statusCode
    this.body = body
  }

  /** The refusal's stable code. */
  get code(): string {
    return this.body.error.code
  }
}
