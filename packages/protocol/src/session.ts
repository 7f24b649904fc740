/**
 * Sessions: state (variables, imports, functions, files in the work dir) kept between calls.
 *
 * A session lives on exactly one runner. Its id names that runner (see
 * {@link encodeSessionId}), so any gateway replica routes a call to it without shared state.
 * A session whose runner or sandbox died answers HTTP 410 with `SF_ERR_SESSION_LOST` and status
 * `infra_error` (the fleet's fault, retriable as a fresh session is), never a silent fresh state.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import { boundedInteger } from './bounded-integer.ts'
import { ExecRequestSchema, LANGUAGES, LIMITS } from './exec.ts'

/** Static bounds of sessions (a deployment may configure tighter ones). */
export const SESSION_LIMITS = Object.freeze({
  /** Default idle time-to-live, in seconds. */
  defaultTtlS: 600,
  /** Longest idle time-to-live any deployment accepts, in seconds. */
  maxTtlS: 86_400,
  minTtlS: 1,
  /** Default memory of a session's cells, in MiB. */
  defaultMemoryMb: 512
})

/** Schema of {@link SessionCreateRequest}. */
export const SessionCreateRequestSchema = Type.Object(
  {
    language: Type.Optional(
      Type.Union(
        LANGUAGES.map((l) => Type.Literal(l)),
        { default: 'python' }
      )
    ),
    ttl_s: boundedInteger(
      SESSION_LIMITS.minTtlS,
      SESSION_LIMITS.maxTtlS,
      SESSION_LIMITS.defaultTtlS,
      'Idle time after which the session is closed, in seconds'
    ),
    memory_mb: boundedInteger(
      LIMITS.minMemoryMb,
      LIMITS.maxMemoryMb,
      SESSION_LIMITS.defaultMemoryMb,
      "Memory each cell may allocate beyond the session's state, in MiB"
    )
  },
  { $id: 'SessionCreateRequest', additionalProperties: false }
)
/** `POST /v1/sessions` body. */
export type SessionCreateRequest = Static<typeof SessionCreateRequestSchema>

/** Schema of {@link SessionInfo}. */
export const SessionInfoSchema = Type.Object(
  {
    session_id: Type.String(),
    language: Type.Union(LANGUAGES.map((l) => Type.Literal(l))),
    runner: Type.String({ description: 'Runner holding the session' }),
    ttl_s: Type.Integer(),
    memory_mb: Type.Integer(),
    created_at: Type.String({ description: 'ISO 8601' }),
    last_used_at: Type.String({ description: 'ISO 8601' }),
    expires_at: Type.String({ description: 'ISO 8601: last use plus ttl_s' }),
    cells: Type.Integer({ description: 'Cells run so far' })
  },
  { $id: 'SessionInfo', additionalProperties: false }
)
/** `POST /v1/sessions` and `GET /v1/sessions/:id` answer. */
export type SessionInfo = Static<typeof SessionInfoSchema>

/** An `ExecRequest` field's schema (its bounds, its default), described as a session cell has it. */
function described<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description }
}

const exec = ExecRequestSchema.properties

/** Schema of {@link SessionExecRequest}: the fields of an `ExecRequest` a cell has, with their bounds. */
export const SessionExecRequestSchema = Type.Object(
  {
    code: described(exec.code, "The cell to run in the session's state"),
    stdin: exec.stdin,
    timeout_ms: described(
      exec.timeout_ms,
      'Wall-clock limit of this cell; a cell that passes it is killed and the session keeps the state it had before the cell'
    ),
    files: described(
      exec.files,
      "Files written before the cell runs: path → base64 content, relative to the session's working directory (or absolute in its writable places: the working directory, and /tmp, /mnt, /dev/shm where the session has namespaces of its own)"
    ),
    fetch_files: described(
      exec.fetch_files,
      'Paths read back after the cell, as `files` names them; each one not returned is in `fetch_errors` with the reason'
    ),
    request_id: described(exec.request_id, "The cell's id, echoed in the result and the logs")
  },
  { $id: 'SessionExecRequest', additionalProperties: false }
)
/** `POST /v1/sessions/:id/execute` body; the answer is an `ExecResult` (with `display`). */
export type SessionExecRequest = Static<typeof SessionExecRequestSchema>

/** Stable code of the "session lost" error (HTTP 410, status `infra_error`): its runner or sandbox died. */
export const SESSION_LOST = 'SF_ERR_SESSION_LOST'
/** Stable code of the "no such session" error (HTTP 404): never existed, closed or expired. */
export const SESSION_NOT_FOUND = 'SF_ERR_SESSION_NOT_FOUND'

const SEPARATOR = '.'

/**
 * Builds a session id that names its runner: `base64url(runner) + "." + nonce`. Gateways read
 * the runner back with {@link decodeSessionId}; the nonce (random, at least 16 hex digits)
 * makes ids unguessable.
 */
export function encodeSessionId(runner: string, nonce: string): string {
  return Buffer.from(runner, 'utf8').toString('base64url') + SEPARATOR + nonce
}

/** Reads the runner out of a session id; `undefined` when the id is not one sandfleet made. */
export function decodeSessionId(sessionId: string): { runner: string; nonce: string } | undefined {
  const at = sessionId.indexOf(SEPARATOR)
  if (at <= 0 || at === sessionId.length - 1) return undefined
  const head = sessionId.slice(0, at)
  if (!/^[A-Za-z0-9_-]+$/.test(head)) return undefined
  const runner = Buffer.from(head, 'base64url').toString('utf8')
  if (runner === '' || Buffer.from(runner, 'utf8').toString('base64url') !== head) return undefined
  const nonce = sessionId.slice(at + 1)
  if (!/^[A-Za-z0-9_-]+$/.test(nonce)) return undefined
  return { runner, nonce }
}

/** Paths of the runner's internal session API, which gateways call. */
export const RUNNER_SESSION_PATHS = Object.freeze({
  create: '/v1/sessions',
  one: '/v1/sessions/:id',
  execute: '/v1/sessions/:id/execute'
})
