/**
 * SandboxFusion's shapes and their translation to and from sandfleet's, as pure functions.
 * Status mapping (also in the README):
 *
 * | sandfleet `status` | `status` | `run_result.status` | `return_code` |
 * | --- | --- | --- | --- |
 * | ok | Success | Finished | 0 |
 * | error (raised, non-zero exit) | Failed | Finished | the exit code (1 for an exception) |
 * | timeout | Failed | TimeLimitExceeded | null |
 * | memory, killed | Failed | Finished | the exit code, or -9 (SIGKILL) when none |
 * | overloaded, queue_timeout, infra_error | SandboxError | (`run_result` null) | |
 * | invalid_request | HTTP 422 `detail` | | |
 *
 * A compiled language (`cpp`, and any other of SandboxFusion's list the judge has a row for) is a
 * judge of one test (judged-run.ts): `compile_result` is the compile step (`Finished` with the
 * compiler's return code, `TimeLimitExceeded` past `compile_timeout`), `run_result` the run, null
 * when the compile failed; a run killed by a signal has its return code as -N (an assertion's
 * SIGABRT: -6).
 */
import {
  fileFieldsProblem,
  isRetriableVerdict,
  judgeLanguageRow,
  JUDGE_LIMITS,
  LIMITS,
  type ExecRequest,
  type ExecResult,
  type JudgeCompileResult,
  type JudgeRequest,
  type JudgeResult,
  type Language
} from '@sandfleet/protocol'
import { toNumber, type ModelSpec } from '../fastapi/fastapi-errors.ts'
import { truncationNote } from '../compat.ts'
import { compileFailed, runAsJudge, signalReturnCode, testRun } from '../judged-run.ts'
import type { CommandRunResult, JupyterCell, RunCodeResponse } from './sandbox-fusion-schemas.ts'

export type { CommandRunResult, JupyterCell, RunCodeResponse, RunJupyterResponse } from './sandbox-fusion-schemas.ts'

/** SandboxFusion `language` values sandfleet runs, and the sandfleet language of each. */
export const SF_LANGUAGES: Readonly<Record<string, Language>> = Object.freeze({
  python: 'python',
  nodejs: 'javascript'
})

/**
 * SandboxFusion `language` values of compiled languages, by the judge's language of each: those its list shares with
 * the judge's table (the fleet compiles them once, then runs them).
 */
export const SF_COMPILED: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    (['cpp', 'go', 'java', 'rust'] as const).flatMap((l) => (judgeLanguageRow(l) === undefined ? [] : [[l, l]]))
  )
)

/** Every `language` `/run_code` takes (its 422 lists them). */
export const SF_RUN_LANGUAGES: readonly string[] = Object.freeze([
  ...Object.keys(SF_LANGUAGES),
  ...Object.keys(SF_COMPILED)
])

/** SandboxFusion's default `compile_timeout`, seconds. */
export const SF_COMPILE_TIMEOUT_S = 10

/** The request model of `POST /run_code` (fields we do not use are accepted and ignored). */
export const RUN_CODE_MODEL: ModelSpec = Object.freeze({
  code: { kind: 'string', required: true, description: 'The program' },
  language: {
    kind: 'literal',
    values: SF_RUN_LANGUAGES,
    required: true,
    description: `python, nodejs (JavaScript in an isolate), or a compiled language (${Object.keys(SF_COMPILED).join(', ')}: compiled once, then run; a 422 naming language when the fleet judges none of it)`
  },
  compile_timeout: {
    kind: 'number',
    description: `Seconds the compile step may take (default ${SF_COMPILE_TIMEOUT_S}); unused for python and nodejs`
  },
  run_timeout: { kind: 'number', description: 'Seconds (default 10)' },
  memory_limit_MB: { kind: 'integer', description: "MiB; -1 or absent: the deployment's default" },
  stdin: { kind: 'string', nullable: true, description: 'Standard input' },
  files: {
    kind: 'string_map',
    nullable: true,
    description:
      'Files written before the run: path (relative to the working directory, or absolute in /tmp, /mnt or /dev/shm) → base64 content'
  },
  fetch_files: {
    kind: 'string_list',
    description:
      'Paths read back after the run (relative to the working directory, or absolute), answered in files; a file not there is left out'
  }
})

/** The request model of `POST /run_jupyter`. */
export const RUN_JUPYTER_MODEL: ModelSpec = Object.freeze({
  cells: { kind: 'string_list', required: true, description: 'Python cells, run in order in one state' },
  cell_timeout: { kind: 'number', description: "Seconds per cell; 0 or absent: no limit of a cell's own" },
  total_timeout: { kind: 'number', description: 'Seconds for the whole run (default 45)' },
  kernel: { kind: 'literal', values: ['python3'] },
  files: {
    kind: 'string_map',
    nullable: true,
    description:
      'Files written before the first cell: path (relative to the working directory, or absolute in /tmp, /mnt or /dev/shm) → base64 content'
  },
  fetch_files: {
    kind: 'string_list',
    description: 'Paths read back after the last cell (relative to the working directory, or absolute)'
  }
})

/** `POST /run_code` body, after validation. */
export interface RunCodeRequest {
  code: string
  language: string
  compile_timeout?: number | string
  run_timeout?: number | string
  memory_limit_MB?: number | string
  stdin?: string | null
  files?: Record<string, string | null> | null
  fetch_files?: string[]
}

/** `POST /run_jupyter` body, after validation. */
export interface RunJupyterRequest {
  cells: string[]
  cell_timeout?: number | string
  total_timeout?: number | string
  kernel?: string
}

/** SandboxFusion's defaults (seconds) when a field is absent; `cellTimeoutS` 0: no limit of a cell's own. */
export const SF_DEFAULTS = Object.freeze({ runTimeoutS: 10, cellTimeoutS: 0, totalTimeoutS: 45 })

/** Seconds (possibly fractional, possibly a numeric string) → milliseconds within the contract. */
export function secondsToMs(value: number | string | undefined, defaultS: number): number {
  const s = toNumber(value) ?? defaultS
  return Math.min(LIMITS.maxTimeoutMs, Math.max(LIMITS.minTimeoutMs, Math.round(s * 1000)))
}

/** `memory_limit_MB` → `memory_mb` (`-1` or absent: the deployment's default). */
export function memoryMb(value: number | string | undefined): number | undefined {
  const n = toNumber(value)
  if (n === undefined || n <= 0) return undefined
  return Math.min(LIMITS.maxMemoryMb, Math.max(LIMITS.minMemoryMb, Math.round(n)))
}

/**
 * A validated `/run_code` body → an {@link ExecRequest}. An absent `run_timeout` is SandboxFusion's
 * default or `maxTimeoutMs`, whichever is less. `compile_timeout` has no use for Python or JavaScript.
 */
export function toExecRequest(body: RunCodeRequest, maxTimeoutMs: number = LIMITS.maxTimeoutMs): ExecRequest {
  const req: ExecRequest = {
    language: SF_LANGUAGES[body.language] ?? 'python',
    code: body.code,
    timeout_ms: secondsToMs(body.run_timeout, Math.min(SF_DEFAULTS.runTimeoutS, maxTimeoutMs / 1000))
  }
  if (typeof body.stdin === 'string' && body.stdin !== '') req.stdin = body.stdin
  const mem = memoryMb(body.memory_limit_MB)
  if (mem !== undefined) req.memory_mb = mem
  if (body.files != null) {
    const files: Record<string, string> = {}
    for (const [path, content] of Object.entries(body.files)) if (content != null) files[path] = content
    if (Object.keys(files).length > 0) req.files = files
  }
  if (body.fetch_files !== undefined && body.fetch_files.length > 0) req.fetch_files = body.fetch_files
  return req
}

/** True when `/run_code`'s `language` is compiled (a judge of one test), not run as a snippet. */
export function isCompiled(language: string): boolean {
  return SF_COMPILED[language] !== undefined
}

/**
 * A validated `/run_code` body of a compiled language → the judge of one test that compiles and runs it: `run_timeout`
 * and `compile_timeout` (SandboxFusion's 10 s each, or `maxTimeoutMs` when less), `memory_limit_MB`, `stdin`.
 */
export function toJudgeRequest(body: RunCodeRequest, maxTimeoutMs: number = LIMITS.maxTimeoutMs): JudgeRequest {
  const run = {
    language: SF_COMPILED[body.language] ?? body.language,
    code: body.code,
    stdin: typeof body.stdin === 'string' ? body.stdin : '',
    timeout_ms: secondsToMs(body.run_timeout, Math.min(SF_DEFAULTS.runTimeoutS, maxTimeoutMs / 1000)),
    compile_timeout_ms: secondsToMs(
      body.compile_timeout,
      Math.min(SF_COMPILE_TIMEOUT_S, JUDGE_LIMITS.defaultCompileTimeoutMs / 1000, maxTimeoutMs / 1000)
    ),
    memory_mb: memoryMb(body.memory_limit_MB)
  }
  return runAsJudge(run)
}

/** The `compile_result` of a compile step. */
export function toCompileResult(compile: JudgeCompileResult): CommandRunResult {
  const limited = compile.status === 'time_limit'
  return {
    status: limited ? 'TimeLimitExceeded' : 'Finished',
    execution_time: compile.duration_ms / 1000,
    return_code: limited ? null : (compile.exit_code ?? (compile.status === 'ok' ? 0 : -9)),
    stdout: compile.stdout,
    stderr: compile.stderr
  }
}

/**
 * A judged run of a compiled program → SandboxFusion's `RunCodeResponse`: the compile step and the run each with their
 * own status; the run null when the compile failed; the fleet's verdicts `SandboxError`.
 */
export function judgedRunCodeResponse(result: JudgeResult): RunCodeResponse {
  const pod = result.runner === '' ? null : result.runner
  if (isRetriableVerdict(result.verdict) || result.verdict === 'invalid_request')
    return {
      status: 'SandboxError',
      message: `${result.verdict}: ${result.error?.message ?? 'the fleet could not run the code'}`,
      compile_result: null,
      run_result: null,
      executor_pod_name: pod,
      files: {}
    }
  const compile = result.compile === null ? null : toCompileResult(result.compile)
  const test = testRun(result)
  if (compileFailed(result) || test === undefined)
    return {
      status: 'Failed',
      message: '',
      compile_result: compile,
      run_result: null,
      executor_pod_name: pod,
      files: {}
    }
  const limited = test.verdict === 'time_limit'
  const code = limited ? null : (test.exit_code ?? signalReturnCode(test.signal) ?? -9)
  const run: CommandRunResult = {
    status: limited ? 'TimeLimitExceeded' : 'Finished',
    execution_time: test.duration_ms / 1000,
    return_code: code,
    stdout: test.stdout,
    stderr:
      test.stderr +
      truncationNote({ truncated: test.truncated ?? { stdout: test.verdict === 'output_limit', stderr: false } })
  }
  return {
    status: test.verdict === 'accepted' && code === 0 ? 'Success' : 'Failed',
    message: '',
    compile_result: compile,
    run_result: run,
    executor_pod_name: pod,
    files: {}
  }
}

/**
 * The first file of `files` a sandbox could not decode (the protocol's `fileFieldsProblem`: a path
 * that names no writable place of a sandbox, or a content that is not base64), as its path and
 * the line saying why; undefined when every file can be written. (`fetch_files` needs no check:
 * the sandbox reads only from its places and says why it left a file out.)
 */
export function undecodableFile(body: Pick<RunCodeRequest, 'files'>): { path: string; message: string } | undefined {
  if (body.files == null) return undefined
  const files = Object.fromEntries(Object.entries(body.files).filter((e): e is [string, string] => e[1] != null))
  const problem = fileFieldsProblem({ files })
  return problem === undefined ? undefined : { path: problem.field.slice('files/'.length), message: problem.message }
}

/** True for the statuses SandboxFusion calls `SandboxError`: the fleet's fault, not the code's. */
export function isSandboxError(status: ExecResult['status']): boolean {
  return (
    status === 'overloaded' || status === 'queue_timeout' || status === 'infra_error' || status === 'invalid_request'
  )
}

/** The `run_result` of a result whose code ran. */
export function toCommandRunResult(result: ExecResult): CommandRunResult {
  let returnCode: number | null
  switch (result.status) {
    case 'ok':
      returnCode = result.exit_code ?? 0
      break
    case 'timeout':
      returnCode = null
      break
    case 'error':
      returnCode = result.exit_code ?? 1
      break
    default:
      returnCode = result.exit_code ?? -9
  }
  return {
    status: result.status === 'timeout' ? 'TimeLimitExceeded' : 'Finished',
    execution_time: result.duration_ms / 1000,
    return_code: returnCode,
    stdout: result.stdout,
    stderr: result.stderr + truncationNote(result)
  }
}

/** A sandfleet result → SandboxFusion's `RunCodeResponse`. */
export function toRunCodeResponse(result: ExecResult): RunCodeResponse {
  const pod = result.runner === '' ? null : result.runner
  if (isSandboxError(result.status)) {
    return {
      status: 'SandboxError',
      message: `${result.status}: ${result.error?.message ?? 'the fleet could not run the code'}`,
      compile_result: null,
      run_result: null,
      executor_pod_name: pod,
      files: {}
    }
  }
  return {
    status: result.status === 'ok' ? 'Success' : 'Failed',
    message: '',
    compile_result: null,
    run_result: toCommandRunResult(result),
    executor_pod_name: pod,
    files: result.files
  }
}

/**
 * A session cell's result → one Jupyter cell. An exception goes to `error` (ename, evalue and the
 * traceback as lines), not to `stderr`, as a Jupyter kernel reports it; a cell that passed its
 * timeout reports `TimeoutError` the same way.
 */
export function toJupyterCell(result: ExecResult, cellTimeoutMs: number): JupyterCell {
  const cell: JupyterCell = {
    stdout: result.stdout,
    stderr: result.stderr + truncationNote(result),
    display: result.display ?? [],
    error: []
  }
  if (result.status === 'timeout') {
    cell.error.push({
      ename: 'TimeoutError',
      evalue: `cell exceeded cell_timeout (${cellTimeoutMs / 1000} s)`,
      traceback: []
    })
  } else if (result.status !== 'ok' && result.error !== null) {
    const tb = result.error.traceback ?? ''
    if (tb !== '' && cell.stderr.endsWith(tb)) cell.stderr = cell.stderr.slice(0, -tb.length)
    cell.error.push({
      ename: result.error.type,
      evalue: result.error.message,
      traceback: tb === '' ? [] : tb.replace(/\n$/, '').split('\n')
    })
  }
  return cell
}
