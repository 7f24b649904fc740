/**
 * One tool call: {@link ExecRequest} in, {@link ExecResult} out. The same two shapes run
 * through the gateway, the runner and the client; each layer adds only what is its own.
 */
import { Type, type Static } from '@sinclair/typebox'
import { boundedInteger } from './bounded-integer.ts'
import { StatusSchema } from './status.ts'

/** Languages a sandbox can run. */
export const LANGUAGES = ['python', 'javascript'] as const
/** A language a sandbox can run. */
export type Language = (typeof LANGUAGES)[number]

/**
 * How a Python job is isolated from the jobs its sandbox ran before and runs after (the process
 * and docker backends): `fork`, a fresh process forked for it from a warm zygote; `reuse`, a warm
 * process that ran earlier jobs, taken only when a check after each proved it clean (code the check
 * cannot follow runs forked). Other backends have one level of their own and ignore it.
 */
export const ISOLATION_LEVELS = ['fork', 'reuse'] as const
/** An isolation level. */
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number]

const IsolationSchema = (description: string) =>
  Type.Union(
    ISOLATION_LEVELS.map((l) => Type.Literal(l)),
    { description }
  )

/**
 * Static bounds of the contract. A deployment may configure tighter limits (the gateway and the
 * runner check those and name the field), never looser ones.
 */
export const LIMITS = Object.freeze({
  /** Largest `timeout_ms` any deployment accepts. */
  maxTimeoutMs: 3_600_000,
  minTimeoutMs: 1,
  /** Default `timeout_ms`. */
  defaultTimeoutMs: 10_000,
  /** Largest `memory_mb` any deployment accepts. */
  maxMemoryMb: 65_536,
  minMemoryMb: 16,
  /** Default `memory_mb`. */
  defaultMemoryMb: 1024,
  /** Most items in one batch request. */
  maxBatchItems: 1024,
  /** Most files in one request. */
  maxFiles: 256,
  /** Longest file path in `files` or `fetch_files`. */
  maxPathLength: 255,
  /**
   * Deepest nesting of a request body (an array or object inside another counts one level).
   * No request of the contract comes near it; a deeper body is refused as invalid JSON before
   * any route sees it, so no recursive code (validation, serialization) meets unbounded depth.
   */
  maxJsonDepth: 64
})

/**
 * The places a Python job may write besides its working directory, all emptied after each job: a
 * path in `files` or `fetch_files` is relative to the working directory, or absolute in one of
 * these or in the working directory. A session has them when it runs in namespaces of its own.
 */
export const FILE_PLACES: readonly string[] = Object.freeze(['/tmp', '/mnt', '/dev/shm'])

/** Schema of {@link ExecRequest}. */
export const ExecRequestSchema = Type.Object(
  {
    language: Type.Optional(
      Type.Union(
        LANGUAGES.map((l) => Type.Literal(l)),
        {
          default: 'python',
          description: 'python (default) or javascript'
        }
      )
    ),
    code: Type.String({ description: 'The program to run' }),
    stdin: Type.Optional(Type.String({ description: 'Text given to the program on standard input', default: '' })),
    timeout_ms: boundedInteger(
      LIMITS.minTimeoutMs,
      LIMITS.maxTimeoutMs,
      LIMITS.defaultTimeoutMs,
      'Wall-clock limit for the run, in milliseconds'
    ),
    memory_mb: boundedInteger(
      LIMITS.minMemoryMb,
      LIMITS.maxMemoryMb,
      LIMITS.defaultMemoryMb,
      'Memory the program may allocate beyond the warm interpreter, in MiB'
    ),
    files: Type.Optional(
      Type.Record(
        Type.String({ minLength: 1, maxLength: LIMITS.maxPathLength }),
        Type.String({ contentEncoding: 'base64' }),
        {
          description:
            "Files written before the job runs: path → base64 content (the standard alphabet, padded). A path is relative to the job's working directory and stays in it, or is absolute in a writable place of the sandbox (/tmp, /mnt, /dev/shm, the working directory). A content that is not base64, or a path outside those places, is refused before anything runs: invalid_request (HTTP 400) naming files/PATH"
        }
      )
    ),
    fetch_files: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.maxPathLength }), {
        maxItems: LIMITS.maxFiles,
        description:
          'Paths read back after the run (relative to the working directory, or absolute in a writable place), returned in `files`; each one not returned is in `fetch_errors` with the reason'
      })
    ),
    isolation: Type.Optional(
      IsolationSchema(
        "How the job is kept from the jobs its sandbox runs before and after it (Python on the process and docker backends): fork, a fresh process forked for it; reuse, a warm process a check proved clean after its last job, or a fork when the code uses what the check cannot follow. Default: the runner's isolation setting"
      )
    ),
    session_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 128, description: 'Run inside this session (state persists)' })
    ),
    request_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "The call's id, echoed in the result and the logs (without one the gateway gives one, returned in the result). The runner that ran it remembers it for a while: the same request sent again with it gets the first run's answer (replayed: true), or waits for it while it runs, instead of running twice"
      })
    )
  },
  { $id: 'ExecRequest', additionalProperties: false }
)

/** A tool call as the caller sends it. */
export type ExecRequest = Static<typeof ExecRequestSchema>

/** An {@link ExecRequest} with every default applied, as runners and drivers see it. */
export interface ResolvedExecRequest {
  language: Language
  code: string
  stdin: string
  timeout_ms: number
  memory_mb: number
  files: Record<string, string>
  fetch_files: string[]
  isolation: IsolationLevel
  session_id?: string
  request_id?: string
}

/**
 * The `timeout_ms` a request runs with: its own, else the contract's default within the largest
 * `timeout_ms` the service takes (`maxTimeoutMs`, a deployment's limit). Every layer resolves it
 * here: the one default of `timeout_ms`.
 */
export function timeoutMsOf(
  request: Pick<ExecRequest, 'timeout_ms'>,
  maxTimeoutMs: number = LIMITS.maxTimeoutMs
): number {
  return request.timeout_ms ?? Math.min(LIMITS.defaultTimeoutMs, maxTimeoutMs)
}

/** What a runner decides for a request that leaves it out, beyond the contract's defaults. */
export interface RunnerDefaults {
  /** The level of a request without `isolation` (the contract's: `fork`). */
  isolation?: IsolationLevel
  /** The runner's largest `timeout_ms`: a request without one gets the default within it. */
  maxTimeoutMs?: number
}

/** Applies the contract's defaults, and the runner's `defaults`, to a validated request. */
export function resolveExecRequest(req: ExecRequest, defaults: RunnerDefaults = {}): ResolvedExecRequest {
  const resolved: ResolvedExecRequest = {
    language: req.language ?? 'python',
    code: req.code,
    stdin: req.stdin ?? '',
    timeout_ms: timeoutMsOf(req, defaults.maxTimeoutMs),
    memory_mb: req.memory_mb ?? LIMITS.defaultMemoryMb,
    files: req.files ?? {},
    fetch_files: req.fetch_files ?? [],
    isolation: req.isolation ?? defaults.isolation ?? 'fork'
  }
  if (req.session_id !== undefined) resolved.session_id = req.session_id
  if (req.request_id !== undefined) resolved.request_id = req.request_id
  return resolved
}

/** Headers of the public API a caller may set beside its body. */
export const GATEWAY_HEADERS = Object.freeze({
  /**
   * The runner that had this call: the `runner` of an earlier answer to the same `request_id`. A
   * retry that names it is sent there while that runner is up, whichever gateway takes it, so
   * the runner answers it from its first run (`replayed`) instead of running it again.
   */
  runner: 'x-sandfleet-runner'
})

/** Schema of {@link ExecErrorInfo}. */
export const ExecErrorInfoSchema = Type.Object(
  {
    type: Type.String({
      description: "Exception class for user errors (ValueError), or a stable SF_ERR_… code for the fleet's"
    }),
    message: Type.String(),
    traceback: Type.Optional(Type.String({ description: "The user's frames only" }))
  },
  { $id: 'ExecErrorInfo' }
)

/** Why a run did not end `ok`. */
export type ExecErrorInfo = Static<typeof ExecErrorInfoSchema>

/** Schema of {@link DisplayData}. */
export const DisplayDataSchema = Type.Record(Type.String(), Type.String(), {
  $id: 'DisplayData',
  description: 'One display result: MIME type → content (text/plain holds the repr)'
})

/** One rich result of a session cell, keyed by MIME type, as in a Jupyter `execute_result`. */
export type DisplayData = Static<typeof DisplayDataSchema>

/** Schema of {@link ExecResult}. */
export const ExecResultSchema = Type.Object(
  {
    status: StatusSchema,
    stdout: Type.String(),
    stderr: Type.String(),
    exit_code: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Process exit code; null when the process was killed or never ran'
    }),
    duration_ms: Type.Number({ description: 'Run time of the code' }),
    queue_ms: Type.Number({ description: 'Time spent waiting for a sandbox' }),
    cpu_ms: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          "The job's own CPU time, user + system, in milliseconds, as the kernel counts it: its processes and the children they reaped (process, docker); the isolate's CPU from the job's start to its end (javascript, pyodide). The fleet's own work around the job (HTTP, queueing, the sandbox's set-up and clean-up) is not in it. Absent when the sandbox could not measure it (a job it never ran, or one stopped by the runner's hard deadline)"
      })
    ),
    truncated: Type.Object({ stdout: Type.Boolean(), stderr: Type.Boolean() }),
    error: Type.Union([ExecErrorInfoSchema, Type.Null()]),
    files: Type.Record(Type.String(), Type.String({ contentEncoding: 'base64' }), {
      description: 'The requested `fetch_files` that were read: path as asked → base64 content'
    }),
    fetch_errors: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "The requested `fetch_files` not returned: path as asked → why (no such file, a directory, not a regular file, larger than 16 MiB, outside the sandbox's writable places, a link out of them). Absent when every one was returned"
      })
    ),
    runner: Type.String({ description: 'Runner that ran it ("" when none did)' }),
    sandbox: Type.String({ description: 'Sandbox that ran it ("" when none did)' }),
    isolation: Type.Optional(
      IsolationSchema(
        'The level the job ran at, on a backend with levels (process, docker): reuse only when it ran in a reused warm process'
      )
    ),
    request_id: Type.Optional(
      Type.String({
        description:
          "The call's id: the caller's request_id, or one the gateway gave it. A retry that sends it again is answered by the run it names, where the fleet still remembers it (replayed), instead of running again"
      })
    ),
    maybe_ran: Type.Optional(
      Type.Boolean({
        description:
          'On a fleet status (overloaded, queue_timeout, infra_error): whether the code may have started. false: it surely did not run, and a retry runs it once; true: it may have run (its answer was lost, or it stalled), and a retry may run it again unless it carries the same request_id to the runner that had it. Absent on an infra_error: as true'
      })
    ),
    replayed: Type.Optional(
      Type.Boolean({
        description:
          "true: this call (its request_id, the same request) had run, or was running, on this runner, and this is the first run's answer, not a second run"
      })
    ),
    display: Type.Optional(
      Type.Array(DisplayDataSchema, {
        description:
          'Session cells only: rich results, as a Jupyter kernel gives them. A cell whose last statement is an expression (not None) gives one item, {"text/plain": repr(value)} and each form its _repr_*_ methods give (text/html, text/latex, image/png base64, …); then one {"text/plain", "image/png"} item per matplotlib figure the cell left open'
      })
    )
  },
  { $id: 'ExecResult', additionalProperties: false }
)

/** The outcome of one tool call. */
export type ExecResult = Static<typeof ExecResultSchema>

/**
 * Whether the code of a call answered `result` may have run: always for a status of the code,
 * never for `invalid_request`; for a fleet status, what its `maybe_ran` says (`overloaded` and
 * `queue_timeout` did not run unless it says so; an `infra_error` may have, unless it says
 * `false`). A caller that retries only what this says did not run never runs a call twice.
 */
export function mayHaveRun(result: Pick<ExecResult, 'status' | 'maybe_ran'>): boolean {
  switch (result.status) {
    case 'invalid_request':
      return false
    case 'overloaded':
    case 'queue_timeout':
      return result.maybe_ran === true
    case 'infra_error':
      return result.maybe_ran !== false
    default:
      return true
  }
}

/**
 * Builds the result of a call that never reached user code (a fleet or request status).
 * `type` is the stable SF_ERR_… code.
 */
export function failedResult(
  status: ExecResult['status'],
  type: string,
  message: string,
  extra: Partial<ExecResult> = {}
): ExecResult {
  return {
    status,
    stdout: '',
    stderr: '',
    exit_code: null,
    duration_ms: 0,
    queue_ms: 0,
    truncated: { stdout: false, stderr: false },
    error: { type, message },
    files: {},
    runner: '',
    sandbox: '',
    ...extra
  }
}
