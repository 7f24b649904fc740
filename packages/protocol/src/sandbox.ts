/**
 * Sandboxes: sessions with a whole sandbox's surface, as agents written for E2B use one. A sandbox is a session (its
 * id names its runner, `encodeSessionId`; its Python state forks before every cell) with, besides its cells: code
 * contexts (each its own globals), files and processes (the session's agent, in the session's own namespaces), an
 * end fixed in time (`timeout_s` from its start or from the last `set_timeout`, not from its last use), its labels,
 * and an access token, a secret of its own that opens it to whoever holds it without the API key (the gateway's
 * compatible API hands it to the SDK).
 *
 * The gateway asks a runner through {@link RunnerSandboxesApi}; the runner answers every call of a sandbox the
 * caller may not reach (another key's, a wrong token) as not found, a sandbox whose process died as lost
 * (`SF_ERR_SESSION_LOST`), never as a fresh one.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { CallContext } from './call-context.ts'
import type { ErrorBody } from './errors.ts'
import type { ExecResult } from './exec.ts'

/** Bounds of sandboxes (a deployment may configure tighter ones). */
export const SANDBOX_LIMITS = Object.freeze({
  /** The longest a sandbox lives from its start or its last `set_timeout`, in seconds (E2B's own most: 24 h). */
  maxTimeoutS: 86_400,
  /** Labels a sandbox holds at most, and the longest key and value. */
  maxLabels: 64,
  maxLabelChars: 1024,
  /** Environment variables given at once at most. */
  maxEnv: 256
})

const strings = (max: number, description: string) =>
  Type.Record(Type.String({ maxLength: SANDBOX_LIMITS.maxLabelChars }), Type.String({ maxLength: 32_768 }), {
    maxProperties: max,
    description
  })

/** Schema of {@link SandboxCreateRequest}. */
export const SandboxCreateRequestSchema = Type.Object(
  {
    template: Type.String({ minLength: 1, maxLength: 256, description: 'The name the caller asked for' }),
    timeout_s: Type.Integer({ minimum: 0, maximum: SANDBOX_LIMITS.maxTimeoutS, description: 'Seconds it lives' }),
    memory_mb: Type.Optional(Type.Integer({ minimum: 16, maximum: 65_536 })),
    labels: Type.Optional(strings(SANDBOX_LIMITS.maxLabels, 'Labels it is listed with (E2B metadata)')),
    env: Type.Optional(strings(SANDBOX_LIMITS.maxEnv, 'Environment of its cells and processes'))
  },
  { $id: 'SandboxCreateRequest', additionalProperties: false }
)
/** What a sandbox is made with (the runner's `POST /v1/sandboxes`). */
export type SandboxCreateRequest = Static<typeof SandboxCreateRequestSchema>

/** A sandbox as the runner describes it. */
export interface SandboxInfo {
  sandbox_id: string
  runner: string
  template: string
  labels: Record<string, string>
  memory_mb: number
  /** ISO 8601. */
  started_at: string
  /** ISO 8601: when it is killed. */
  end_at: string
  /** Its access token: in the answers of create and of a call by its key (`info`), never by token. */
  token?: string
  /** The key that made it (a digest of its API key, '' without one): whose quotas its calls take. */
  owner: string
}

/** Who calls: the caller's key (a digest of its API key, '' without one), or the holder of a sandbox's token. */
export type SandboxAuth = { key: string } | { token: string | undefined }

/** The languages a code context runs. */
export type ContextLanguage = 'python' | 'javascript'

/** A code context: its own globals (Python), or its own isolate's context (JavaScript). */
export interface SandboxContext {
  id: string
  language: ContextLanguage
  cwd: string
}

/** One display result of a run: MIME type → content, and whether it is the value of the code's last expression. */
export interface SandboxDisplay {
  data: Record<string, string>
  main: boolean
}

/** What one run in a sandbox gave. */
export interface SandboxRun {
  /** The run's result (`display` left out: see `results`). */
  result: ExecResult
  results: SandboxDisplay[]
  /** Runs of its context so far, this one included. */
  execution_count: number
}

/** A file or directory as a sandbox's agent describes it (its last link not followed). */
export interface SandboxEntry {
  name: string
  type: 'file' | 'dir' | 'symlink' | 'other'
  path: string
  size: number
  mode: number
  permissions: string
  owner: string
  group: string
  /** Seconds since the epoch. */
  mtime: number
  symlink_target?: string
}

/** A process a sandbox runs, as it was started. */
export interface SandboxProcess {
  pid: number
  cmd: string
  args: string[]
  envs: Record<string, string>
  cwd: string
  tag?: string
}

/** The calls on one sandbox, with what each answers. */
export interface SandboxCalls {
  /** Its info; with its token when asked by key. */
  info: { request: { op: 'info' }; answer: SandboxInfo }
  /** It lives `timeout_s` from now. */
  set_timeout: { request: { op: 'set_timeout'; timeout_s: number }; answer: SandboxInfo }
  kill: { request: { op: 'kill' }; answer: Record<string, never> }
  /** Code, in a context (`context`; default: the language's default context; `env` for this run only). */
  run: {
    request: {
      op: 'run'
      code: string
      context?: string
      language?: ContextLanguage
      env?: Record<string, string>
      timeout_ms?: number
    }
    answer: SandboxRun
  }
  context_create: { request: { op: 'context_create'; language: ContextLanguage; cwd?: string }; answer: SandboxContext }
  context_list: { request: { op: 'context_list' }; answer: { contexts: SandboxContext[] } }
  context_restart: { request: { op: 'context_restart'; context: string }; answer: Record<string, never> }
  context_remove: { request: { op: 'context_remove'; context: string }; answer: Record<string, never> }
  /** Reads a regular file whole (`data`: base64). */
  read: { request: { op: 'read'; path: string }; answer: { data: string } }
  /** Writes a file, making its directories. */
  write: { request: { op: 'write'; path: string; data: string }; answer: { entry: SandboxEntry } }
  stat: { request: { op: 'stat'; path: string }; answer: { entry: SandboxEntry } }
  list: { request: { op: 'list'; path: string; depth: number }; answer: { entries: SandboxEntry[] } }
  /** Makes a directory and its parents; a path that exists is SF_ERR_SANDBOX_PATH_EXISTS. */
  mkdir: { request: { op: 'mkdir'; path: string }; answer: { entry: SandboxEntry } }
  move: { request: { op: 'move'; source: string; destination: string }; answer: { entry: SandboxEntry } }
  remove: { request: { op: 'remove'; path: string }; answer: Record<string, never> }
  /** The processes running now. */
  ps: { request: { op: 'ps' }; answer: { processes: SandboxProcess[] } }
  /** Signal 9 or 15 to a process's group. */
  signal: { request: { op: 'signal'; pid: number; signal: 9 | 15 }; answer: Record<string, never> }
  /** Bytes for a process's stdin (`data`: base64). */
  stdin: { request: { op: 'stdin'; pid: number; data: string }; answer: Record<string, never> }
  close_stdin: { request: { op: 'close_stdin'; pid: number }; answer: Record<string, never> }
}

/** A call's op. */
export type SandboxOp = keyof SandboxCalls
/** A call on one sandbox. */
export type SandboxCall = SandboxCalls[SandboxOp]['request']
/** What call `C` answers. */
export type SandboxAnswer<C extends SandboxCall> = SandboxCalls[C['op']]['answer']

/** The calls of a sandbox answered by its agent (files, processes), passed to it as they are. */
export const AGENT_OPS: ReadonlySet<SandboxOp> = new Set([
  'read',
  'write',
  'stat',
  'list',
  'mkdir',
  'move',
  'remove',
  'ps',
  'signal',
  'stdin',
  'close_stdin'
])

/** The calls a sandbox answers with no token at all: its code contexts (E2B's SDK sends none for them). */
export const TOKENLESS_OPS: ReadonlySet<SandboxOp> = new Set([
  'context_create',
  'context_list',
  'context_restart',
  'context_remove'
])

/** A process's streamed call: a process started, or one running met again. */
export type SandboxProcessCall =
  | {
      op: 'start'
      cmd: string
      args: string[]
      envs?: Record<string, string>
      cwd?: string
      stdin?: boolean
      tag?: string
    }
  | { op: 'connect'; pid: number }

/** A streamed call: a process's, or a run of code whose output comes as the code writes it. */
export type SandboxStreamCall = SandboxProcessCall | SandboxCalls['run']['request']

/** An event of a process's streamed call: the process's pid, its output (base64), how it ended. */
export type SandboxEvent =
  | { event: 'start'; pid: number }
  | { event: 'stdout' | 'stderr'; data: string }
  | { event: 'end'; exit_code: number; exited: boolean; status: string }

/**
 * The last line of a streamed call refused after its first event (its HTTP status is already sent): the ErrorBody
 * the runner would have answered before the stream began, and that answer's HTTP status in `http_status`, so the
 * refusal blames the same party either way (a lost session: 410 `infra_error`).
 */
export type SandboxStreamRefusal = ErrorBody & { http_status: number }

/**
 * An event of a streamed run: it started (`execution_count`: its context's runs, this one included); its output as
 * the code writes it (what the run's output cap keeps, coalesced into chunks, in the order it was written; an
 * exception's traceback is the run's error, not its stderr); then the whole run, last (its result's `stdout` and
 * `stderr` hold what came in `output` events, `truncated` says whether the cap cut them).
 */
export type SandboxRunEvent =
  | { event: 'running'; execution_count: number }
  | { event: 'output'; stream: 'stdout' | 'stderr'; text: string }
  | { event: 'ran'; run: SandboxRun }

/** The events of streamed call `C`. */
export type SandboxStreamEvent<C extends SandboxStreamCall> = C extends SandboxProcessCall
  ? SandboxEvent
  : SandboxRunEvent

/**
 * One runner's sandboxes. A refusal throws, or rejects, with an error carrying its `code` and `statusCode`
 * (docs/errors.md: `SF_ERR_SESSION_…`, `SF_ERR_SANDBOX_…`).
 */
export interface RunnerSandboxesApi {
  /** Makes a sandbox for `key`; its answer holds its token. */
  create(request: SandboxCreateRequest, key: string): Promise<SandboxInfo>
  /** The sandboxes of `key` on this runner. */
  list(key: string): SandboxInfo[] | Promise<SandboxInfo[]>
  /** One call on sandbox `id`, in `context` (a run's: its caller's signal; none: the runner's own limits alone). */
  call<C extends SandboxCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    context?: CallContext
  ): Promise<SandboxAnswer<C>>
  /**
   * A streamed call on sandbox `id`: `onEvent` sees its events in order; resolves after a process's `end` (or when
   * `signal` aborts: the process runs on), or after a run's `ran` (`signal` aborts: the caller went away, as a
   * call's). Rejects before the first event when refused.
   */
  stream<C extends SandboxStreamCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    onEvent: (event: SandboxStreamEvent<C>) => void,
    signal?: AbortSignal
  ): Promise<void>
}

/** Paths of the runner's internal sandbox API, which gateways call. */
export const RUNNER_SANDBOX_PATHS = Object.freeze({
  /** POST: create; GET: the key's sandboxes. */
  all: '/v1/sandboxes',
  /** POST: one call (a {@link SandboxCall} body). */
  call: '/v1/sandboxes/:id/call',
  /**
   * POST: a streamed call (a {@link SandboxStreamCall} body), answered in NDJSON events; a refusal after the first is
   * a last line {@link SandboxStreamRefusal}.
   */
  stream: '/v1/sandboxes/:id/stream'
})

/** The header that carries a sandbox's access token to the runner (the key travels as `RUNNER_HEADERS.sessionKey`). */
export const SANDBOX_TOKEN_HEADER = 'x-sandfleet-sandbox-token'

/** The header that tells the runner how a sandbox's caller is known: `key` (the default) or `token`. */
export const SANDBOX_AUTH_HEADER = 'x-sandfleet-sandbox-auth'

/** Stable code of the "wrong access token" refusal (HTTP 401). */
export const SANDBOX_TOKEN = 'SF_ERR_SANDBOX_TOKEN'
