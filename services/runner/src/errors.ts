/**
 * The runner's errors. Each has a stable `SF_ERR_RUNNER_…` code (documented in docs/errors.md),
 * a message, the HTTP status a caller sees and, when another error led to it, a `cause`.
 *
 * Faults of one job never reject {@link Runner.execute}: they become a result status, and the
 * code travels in `result.error.type`. These classes are thrown only at start-up (config, driver
 * choice) and used to name codes in results and HTTP error bodies.
 */
import { SANDBOX_TOKEN, SESSION_LOST, SESSION_NOT_FOUND } from '@sandfleet/protocol'
import {
  RegisteredError,
  type EdgeCodes,
  type ErrorRegistry,
  type RegisteredErrorOptions
} from '@sandfleet/protocol/http'

/**
 * Every code the runner produces, with the HTTP status and the result status a caller sees (the kit's {@link
 * ErrorRegistry} shape).
 */
export const RUNNER_ERRORS = Object.freeze({
  SF_ERR_RUNNER_CONFIG: { statusCode: 500, status: 'infra_error', message: 'Invalid runner configuration' },
  SF_ERR_RUNNER_DRIVER_UNAVAILABLE: {
    statusCode: 500,
    status: 'infra_error',
    message: 'The backend is not available in this runner'
  },
  SF_ERR_RUNNER_NO_BACKEND: {
    statusCode: 500,
    status: 'infra_error',
    message: 'No isolation backend is available on this host'
  },
  SF_ERR_RUNNER_POOL_START: {
    statusCode: 503,
    status: 'infra_error',
    message: 'No sandbox of the pool could be started'
  },
  SF_ERR_RUNNER_SANDBOX_START: { statusCode: 503, status: 'infra_error', message: 'A sandbox failed to start' },
  SF_ERR_RUNNER_SANDBOX_FAILED: {
    statusCode: 502,
    status: 'infra_error',
    message: 'The sandbox failed while running the job'
  },
  SF_ERR_RUNNER_SANDBOX_TAMPERED: {
    statusCode: 502,
    status: 'infra_error',
    message:
      "An earlier job changed the limits of the sandbox's processes; the job did not run (another sandbox runs it once)"
  },
  SF_ERR_RUNNER_REUSE_VIOLATION: {
    statusCode: 502,
    status: 'infra_error',
    message:
      "The reused process that ran the job broke the executor's protocol (a forged or out-of-order frame, not alone at its end): it was killed, and nothing it said answers the job"
  },
  SF_ERR_RUNNER_STALLED: {
    statusCode: 502,
    status: 'infra_error',
    message:
      "stalled: the job's sandbox, or the runner itself, stopped answering past the job's hard deadline (timeout_ms + the backend's stop + graceMs), or the runner was frozen while the job ran; the fleet's fault, not a timeout of the code (the job may have run)"
  },
  SF_ERR_RUNNER_NO_SANDBOX: {
    statusCode: 503,
    status: 'infra_error',
    message: 'No sandbox can be started: every replacement is failing'
  },
  SF_ERR_RUNNER_NOT_STARTED: { statusCode: 503, status: 'infra_error', message: 'The runner is not started' },
  SF_ERR_RUNNER_DRAINING: {
    statusCode: 503,
    status: 'infra_error',
    message: 'The runner is draining and takes no new jobs'
  },
  SF_ERR_RUNNER_OVERLOADED: { statusCode: 429, status: 'overloaded', message: "The runner's queue is full" },
  SF_ERR_RUNNER_QUEUE_TIMEOUT: {
    statusCode: 503,
    status: 'queue_timeout',
    message: 'The job waited past its queue deadline and was not run'
  },
  SF_ERR_RUNNER_CANCELLED: {
    statusCode: 499,
    status: 'queue_timeout',
    message: 'The caller cancelled the job before it ran'
  },
  SF_ERR_RUNNER_INVALID_REQUEST: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'The request does not match the schema'
  },
  SF_ERR_RUNNER_BAD_JSON: { statusCode: 400, status: 'invalid_request', message: 'The body is not valid JSON' },
  SF_ERR_RUNNER_BODY_TOO_LARGE: {
    statusCode: 413,
    status: 'invalid_request',
    message:
      'The body is larger than the runner accepts (maxBodyBytes, --max-body-bytes); the message gives the limit in bytes'
  },
  SF_ERR_RUNNER_UNSUPPORTED_MEDIA: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'The body must be application/json'
  },
  SF_ERR_RUNNER_LIMIT: {
    statusCode: 400,
    status: 'invalid_request',
    message: "A field is over the runner's configured limit"
  },
  SF_ERR_RUNNER_LANGUAGE: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'This runner does not serve the language'
  },
  SF_ERR_RUNNER_CHECKER: {
    statusCode: 400,
    status: 'invalid_request',
    message:
      "The judge's checker did not compile, or did not end with an exit status (timed out, killed): nothing is said of the program"
  },
  SF_ERR_RUNNER_NOT_FOUND: { statusCode: 404, status: 'invalid_request', message: 'No such route' },
  SF_ERR_RUNNER_METHOD_NOT_ALLOWED: {
    statusCode: 405,
    status: 'invalid_request',
    message: 'The path exists and does not take this method; the Allow header lists those it takes'
  },
  SF_ERR_RUNNER_UNAUTHORIZED: {
    statusCode: 401,
    status: 'infra_error',
    message: "The call did not carry the fleet's shared secret (runnerSecret) as Authorization: Bearer"
  },
  SF_ERR_RUNNER_INTERNAL: { statusCode: 500, status: 'infra_error', message: 'Internal runner error' },
  SF_ERR_RUNNER_DOCKER_ENGINE: {
    statusCode: 503,
    status: 'infra_error',
    message: 'The Docker engine does not answer; start it (`dockerd &`), check `docker info`'
  },
  SF_ERR_RUNNER_DOCKER_IMAGE: {
    statusCode: 503,
    status: 'infra_error',
    message: 'The sandbox image (or its manifest) is missing; run `sandbox-images/python/build-image.sh`'
  },
  SF_ERR_RUNNER_DOCKER_CONTAINER: {
    statusCode: 503,
    status: 'infra_error',
    message: 'A sandbox container failed to start or its stream failed'
  },
  SF_ERR_RUNNER_PYODIDE_BROKEN: {
    statusCode: 200,
    status: 'error',
    message:
      'The job broke its Pyodide sandbox (a JavaScript callback it scheduled threw, or the job runner gave no outcome); the isolate is replaced'
  },
  // Results, in `error.type`, of a job whose executor went away (every driver that speaks the executor protocol).
  SF_ERR_EXECUTOR_CLOSED: {
    statusCode: 200,
    status: 'killed',
    message: 'The job was given to an executor that had already exited'
  },
  SF_ERR_EXECUTOR_EXITED: {
    statusCode: 200,
    status: 'killed',
    message: 'The executor exited while the job ran (killed from outside, or crashed); the sandbox is replaced'
  },
  SF_ERR_EXECUTOR_ZYGOTE_EXITED: {
    statusCode: 200,
    status: 'killed',
    message:
      "The executor's zygote of the job's tier died before or while the job ran (an OOM kill, a kill from outside); the sandbox is replaced"
  },
  SF_ERR_EXECUTOR_BAD_FRAME: {
    statusCode: 502,
    status: 'infra_error',
    message:
      "The executor refused the job's frame (a field missing or of another type than the executor protocol's); nothing ran"
  },
  SF_ERR_EXECUTOR_SPARE_EXITED: {
    statusCode: 200,
    status: 'killed',
    message:
      'The job processes forked for the job were killed before it reached them (an earlier job killed them); the sandbox is replaced'
  },
  // The session API's refusals (sessions/session-routes.ts), each with its HTTP status.
  // A fleet status: the caller did nothing wrong, and a fresh session retries what the lost one held.
  [SESSION_LOST]: {
    statusCode: 410,
    status: 'infra_error',
    message: "The session's process or sandbox died; its state is gone (the fleet's fault). Open a new session."
  },
  [SESSION_NOT_FOUND]: {
    statusCode: 404,
    status: 'invalid_request',
    message: 'No such session on this runner (never opened, closed or expired)'
  },
  SF_ERR_SESSION_LIMIT: {
    statusCode: 429,
    status: 'overloaded',
    message: "The runner, or the caller's key, holds its maximum of sessions"
  },
  SF_ERR_SESSION_HOST: {
    statusCode: 503,
    status: 'infra_error',
    message: 'The session host process could not start or died'
  },
  SF_ERR_SESSION_BUSY: {
    statusCode: 409,
    status: 'invalid_request',
    message: 'The session is running another cell; send cells one at a time'
  },
  SF_ERR_SESSION_DISABLED: {
    statusCode: 501,
    status: 'invalid_request',
    message: 'Sessions are not enabled here (maxSessions is 0, or the backend cannot hold them)'
  },
  // The sandbox API's refusals (sessions/sandbox-routes.ts): a sandbox is a session, so not found and lost are the
  // session's codes.
  [SANDBOX_TOKEN]: {
    statusCode: 401,
    status: 'invalid_request',
    message: "The sandbox's access token is missing or wrong"
  },
  SF_ERR_SANDBOX_BAD_ARGUMENT: {
    statusCode: 400,
    status: 'invalid_request',
    message: 'A call on a sandbox with a bad argument (a path that is a directory, a signal other than 9 or 15, …)'
  },
  SF_ERR_SANDBOX_PATH_NOT_FOUND: {
    statusCode: 404,
    status: 'invalid_request',
    message: 'No such file or directory in the sandbox'
  },
  SF_ERR_SANDBOX_PATH_EXISTS: {
    statusCode: 409,
    status: 'invalid_request',
    message: 'The path already exists in the sandbox (a directory made twice, a directory not empty)'
  },
  SF_ERR_SANDBOX_PATH_DENIED: {
    statusCode: 403,
    status: 'invalid_request',
    message: "The path is outside the sandbox's writable places (its home, /tmp, /mnt, /dev/shm), or not readable"
  },
  SF_ERR_SANDBOX_TOO_LARGE: {
    statusCode: 413,
    status: 'invalid_request',
    message: "A file larger than the sandbox's agent reads or writes (64 MiB), or no space left"
  },
  SF_ERR_SANDBOX_IO: {
    statusCode: 500,
    status: 'infra_error',
    message: "The sandbox's agent failed to read or write (an I/O error)"
  },
  SF_ERR_SANDBOX_PROCESS_NOT_FOUND: {
    statusCode: 404,
    status: 'invalid_request',
    message: 'No such running process in the sandbox (never started, or ended)'
  },
  SF_ERR_SANDBOX_CONTEXT_NOT_FOUND: {
    statusCode: 404,
    status: 'invalid_request',
    message: 'No such code context in the sandbox (never made, or removed)'
  },
  SF_ERR_SANDBOX_UNSUPPORTED: {
    statusCode: 501,
    status: 'invalid_request',
    message: 'The sandbox cannot do this here (a javascript context without isolated-vm)'
  }
} satisfies ErrorRegistry)

/** A stable runner error code. */
export type RunnerErrorCode = keyof typeof RUNNER_ERRORS

/** The codes the runner's HTTP edge answers its faults with (`@sandfleet/protocol/http`'s error shape). */
export const RUNNER_EDGE_CODES = Object.freeze({
  invalidRequest: 'SF_ERR_RUNNER_INVALID_REQUEST',
  invalidJson: 'SF_ERR_RUNNER_BAD_JSON',
  bodyTooLarge: 'SF_ERR_RUNNER_BODY_TOO_LARGE',
  unsupportedMedia: 'SF_ERR_RUNNER_UNSUPPORTED_MEDIA',
  notFound: 'SF_ERR_RUNNER_NOT_FOUND',
  methodNotAllowed: 'SF_ERR_RUNNER_METHOD_NOT_ALLOWED',
  internal: 'SF_ERR_RUNNER_INTERNAL'
} satisfies EdgeCodes<RunnerErrorCode>)

/** An error of the runner, with a stable code, the HTTP status a caller sees, its result status and a cause. */
export class RunnerError extends RegisteredError<RunnerErrorCode> {
  constructor(code: RunnerErrorCode, message?: string, options: RegisteredErrorOptions = {}) {
    super(RUNNER_ERRORS, code, message, options)
    this.name = 'RunnerError'
  }
}

/** A code of the session API. */
export type SessionErrorCode = Extract<RunnerErrorCode, `SF_ERR_SESSION_${string}`>

/** An error of the session API; `statusCode` is what the caller sees, `toBody()` its ErrorBody. */
export class SessionError extends RegisteredError<SessionErrorCode> {
  constructor(code: SessionErrorCode, message?: string, options: RegisteredErrorOptions = {}) {
    super(RUNNER_ERRORS, code, message, options)
    this.name = 'SessionError'
  }
}

/** A code of the sandbox API's own (besides the session codes it answers too). */
export type SandboxErrorCode = Extract<RunnerErrorCode, `SF_ERR_SANDBOX_${string}`>

/** An error of the sandbox API; `statusCode` is what the caller sees, `toBody()` its ErrorBody. */
export class SandboxError extends RegisteredError<SandboxErrorCode> {
  constructor(code: SandboxErrorCode, message?: string, options: RegisteredErrorOptions = {}) {
    super(RUNNER_ERRORS, code, message, options)
    this.name = 'SandboxError'
  }
}

/** A configuration that failed validation: the message lists every problem, one a line. */
export class ConfigError extends RunnerError {
  /** Each problem, e.g. `poolSize: must be an integer ≥ 1 (got "x")`. */
  readonly problems: readonly string[]

  constructor(problems: string[]) {
    super('SF_ERR_RUNNER_CONFIG', `invalid runner configuration:\n  - ${problems.join('\n  - ')}`)
    this.name = 'ConfigError'
    this.problems = Object.freeze([...problems])
  }
}

/** The stable code of any thrown value when it carries one (`SF_ERR_…`), else the fallback. */
export function codeOf(err: unknown, fallback: string): string {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SF_ERR_') ? code : fallback
}
