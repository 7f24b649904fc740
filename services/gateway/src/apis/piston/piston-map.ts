/**
 * Piston's (engineer-man/piston, API v2) shapes and their translation to and from sandfleet's, as
 * pure functions. Status mapping (also in docs/compat.md):
 *
 * | sandfleet `status` | Piston answer |
 * | --- | --- |
 * | ok | 200, `run.code` 0, `signal` null, `status` null |
 * | error | 200, `run.code` the exit code, `status` `RE` |
 * | timeout | 200, `run.code` null, `signal` `SIGKILL`, `status` `TO` |
 * | memory | 200, `run.code` null, `signal` `SIGKILL`, `status` `MO` |
 * | killed | 200, `run.code` null, `signal` `SIGKILL`, `status` `SG` |
 * | overloaded, queue_timeout | 503 `{message}`, `Retry-After` (retriable) |
 * | infra_error | 500 `{message}` (retriable) |
 * | invalid_request | 400 `{message}` |
 *
 * The first file is the program; the others are written beside it. Times are milliseconds,
 * memory limits bytes (-1: the fleet's default).
 *
 * `c++` and `c` (Piston's gcc runtime) are compiled once in a sandbox and run (a judge of one test:
 * judged-run.ts): the answer has Piston's `compile` stage beside `run`, and when the compile failed
 * `run` repeats it, as Piston answers. Their program is one file and takes no `args`.
 */
import {
  base64Problem,
  filePathProblem,
  LIMITS,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type Language
} from '@sandfleet/protocol'
import { judgeCall, type Call } from '../../pipeline/call-limits.ts'
import { truncationNote } from '../compat.ts'
import { compileFailed, execStatusOf, runAsJudge, runOf } from '../judged-run.ts'
import type { PistonResult, PistonRun } from './piston-schemas.ts'

/** Each language sandfleet runs, by every name a Piston client may give it. */
export const PISTON_ALIASES: Readonly<Record<Language, readonly string[]>> = Object.freeze({
  python: ['py', 'py3', 'python3'],
  javascript: ['js', 'node-js', 'node', 'node-javascript']
})

/** The `runtime` each language's `/runtimes` entry names: what runs it. */
export const PISTON_RUNTIMES: Readonly<Record<Language, string>> = Object.freeze({
  python: 'cpython',
  javascript: 'v8'
})

const byName: ReadonlyMap<string, Language> = new Map(
  (Object.entries(PISTON_ALIASES) as Array<[Language, readonly string[]]>).flatMap(([language, aliases]) => [
    [language, language],
    ...aliases.map((a) => [a, language] as [string, Language])
  ])
)

/** The language a Piston `language` names, or `undefined` when sandfleet runs none of that name. */
export function languageOf(name: string): Language | undefined {
  return byName.get(name.toLowerCase())
}

/** Piston's compiled languages (its gcc runtime) the fleet judges, each with its aliases and the judge's language. */
export const PISTON_COMPILED: Readonly<Record<string, { aliases: readonly string[]; judge: string }>> = Object.freeze({
  'c++': { aliases: ['cpp', 'g++'], judge: 'cpp' },
  c: { aliases: ['gcc'], judge: 'c' }
})

/** The runtime Piston names its compiled languages' entries by. */
export const PISTON_COMPILED_RUNTIME = 'gcc'

const compiledByName: ReadonlyMap<string, string> = new Map(
  Object.entries(PISTON_COMPILED).flatMap(([language, { aliases }]) => [
    [language, language],
    ...aliases.map((a) => [a, language] as [string, string])
  ])
)

/** The compiled language (`c++`, `c`) a Piston `language` names, or `undefined`. */
export function compiledOf(name: string): string | undefined {
  return compiledByName.get(name.toLowerCase())
}

/** Piston's default `run_timeout`, ms. */
export const PISTON_RUN_TIMEOUT_MS = 3000

/** Encodings Piston accepts for a file's content. */
export const PISTON_ENCODINGS = ['utf8', 'base64', 'hex'] as const

/** One file of a request. */
export interface PistonFile {
  name?: string
  content: string
  encoding?: (typeof PISTON_ENCODINGS)[number]
}

/** A `POST /api/v2/execute` body, after validation. */
export interface PistonRequest {
  language: string
  version: string
  files: PistonFile[]
  stdin?: string
  args?: string[]
  compile_timeout?: number
  run_timeout?: number
  compile_memory_limit?: number
  run_memory_limit?: number
}

/** The name the program is written under when its file has none (Piston's own choice). */
const DEFAULT_NAME = (index: number): string => `file${index}.code`

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v)

/**
 * The first problem of a body, as Piston answers bad input (`{message}`, 400), naming the field;
 * `undefined` when the body is a request sandfleet can run. Unknown fields are ignored, as
 * Piston ignores them.
 */
export function problemOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object'
  const b = body as Record<string, unknown>
  if (typeof b.language !== 'string') return 'language is required as a string'
  if (typeof b.version !== 'string') return 'version is required as a string'
  if (!Array.isArray(b.files) || b.files.length === 0) return 'files is required as a non-empty array'
  if (b.files.length > LIMITS.maxFiles) return `files has ${b.files.length} items, over the limit of ${LIMITS.maxFiles}`
  for (const [i, f] of (b.files as unknown[]).entries()) {
    if (typeof f !== 'object' || f === null) return `files[${i}] must be an object`
    const file = f as Record<string, unknown>
    if (typeof file.content !== 'string') return `files[${i}].content is required as a string`
    if (
      file.name !== undefined &&
      (typeof file.name !== 'string' || file.name === '' || file.name.length > LIMITS.maxPathLength)
    )
      return `files[${i}].name must be a non-empty string of at most ${LIMITS.maxPathLength} characters`
    if (file.encoding !== undefined && !(PISTON_ENCODINGS as readonly unknown[]).includes(file.encoding))
      return `files[${i}].encoding must be one of ${PISTON_ENCODINGS.join(', ')}`
    const undecodable = fileProblem(file as unknown as PistonFile)
    if (undecodable !== undefined) return `files[${i}].${undecodable}`
  }
  if (b.stdin !== undefined && typeof b.stdin !== 'string') return 'stdin must be a string'
  if (b.args !== undefined && (!Array.isArray(b.args) || b.args.some((a) => typeof a !== 'string')))
    return 'args must be an array of strings'
  for (const field of ['compile_timeout', 'run_timeout'] as const) {
    const v = b[field]
    if (v !== undefined && (!isInt(v) || v < LIMITS.minTimeoutMs || v > LIMITS.maxTimeoutMs))
      return `${field} must be an integer of milliseconds from ${LIMITS.minTimeoutMs} to ${LIMITS.maxTimeoutMs}`
  }
  const minBytes = LIMITS.minMemoryMb * 2 ** 20
  for (const field of ['compile_memory_limit', 'run_memory_limit'] as const) {
    const v = b[field]
    if (v !== undefined && (!isInt(v) || (v !== -1 && (v < minBytes || v > LIMITS.maxMemoryMb * 2 ** 20))))
      return `${field} must be -1 (no limit of the call's own) or an integer of bytes from ${minBytes} to ${LIMITS.maxMemoryMb * 2 ** 20}`
  }
  const language = b.language
  const compiled = compiledOf(language)
  if (languageOf(language) === undefined && compiled === undefined)
    return `language ${JSON.stringify(language)}: ${language}-${b.version} runtime is unknown (this fleet runs ${[...Object.keys(PISTON_ALIASES), ...Object.keys(PISTON_COMPILED)].join(', ')})`
  if (compiled !== undefined) {
    if (((b.args as unknown[] | undefined)?.length ?? 0) > 0)
      return `args: a ${compiled} program runs with no command line on this fleet`
    if ((b.files as unknown[]).length > 1) return `files: a ${compiled} program is one file on this fleet`
  }
  if (b.args !== undefined && (b.args as unknown[]).length > 0 && languageOf(language) === 'javascript')
    return 'args: javascript runs in a V8 isolate, which has no command line'
  return undefined
}

/** Hex as Piston's `hex` encoding takes it: pairs of hex digits. */
const HEX = /^(?:[0-9a-fA-F]{2})*$/

/**
 * What a sandbox could not take of one file (its name as a path that names no writable place, its
 * content not of its encoding: the protocol's checks), as `field problem`; undefined when none.
 */
function fileProblem(file: PistonFile): string | undefined {
  const where = file.name === undefined ? undefined : filePathProblem(file.name)
  if (where !== undefined) return `name ${JSON.stringify(file.name)} ${where}`
  if (file.encoding === 'base64') {
    const what = base64Problem(file.content)
    if (what !== undefined) return `content is not base64: it ${what}`
  }
  if (file.encoding === 'hex' && !HEX.test(file.content)) return 'content is not hex: pairs of the digits 0-9 and a-f'
  return undefined
}

function decode(file: PistonFile): Buffer {
  return Buffer.from(file.content, file.encoding === undefined || file.encoding === 'utf8' ? 'utf8' : file.encoding)
}

/** The program's text: the first file, decoded. */
export function programOf(req: PistonRequest): string {
  return decode(req.files[0] as PistonFile).toString('utf8')
}

/** The limits a request asks for, with Piston's defaults; `maxTimeoutMs` caps the default run time. */
function limitsOf(req: PistonRequest, maxTimeoutMs: number): Pick<ExecRequest, 'timeout_ms' | 'memory_mb'> {
  const limits: Pick<ExecRequest, 'timeout_ms' | 'memory_mb'> = {
    timeout_ms: req.run_timeout ?? Math.min(PISTON_RUN_TIMEOUT_MS, maxTimeoutMs)
  }
  if (req.run_memory_limit !== undefined && req.run_memory_limit !== -1)
    limits.memory_mb = Math.ceil(req.run_memory_limit / 2 ** 20)
  return limits
}

/** What the limits stage holds a request to: its program and its run's limits (a compiled one's compile step too). */
export function callOf(req: PistonRequest, maxTimeoutMs: number): Call {
  if (compiledOf(req.language) !== undefined) return judgeCall(toJudgeRequest(req, maxTimeoutMs))
  return { code: programOf(req), ...limitsOf(req, maxTimeoutMs) }
}

/** Piston's default `compile_timeout`, ms. */
export const PISTON_COMPILE_TIMEOUT_MS = 10_000

/** A request of a compiled language → the judge of one test that compiles and runs it. */
export function toJudgeRequest(req: PistonRequest, maxTimeoutMs: number): JudgeRequest {
  const language = compiledOf(req.language) as string
  return runAsJudge({
    language: PISTON_COMPILED[language]?.judge ?? language,
    code: programOf(req),
    stdin: req.stdin,
    ...limitsOf(req, maxTimeoutMs),
    compile_timeout_ms: req.compile_timeout ?? Math.min(PISTON_COMPILE_TIMEOUT_MS, maxTimeoutMs)
  })
}

/** The Piston field each limited `ExecRequest` field came from. */
export const FIELD_OF: Readonly<Record<string, string>> = Object.freeze({
  code: 'files[0].content',
  compile_timeout_ms: 'compile_timeout',
  'compare/checker/code': 'files[0].content',
  timeout_ms: 'run_timeout',
  memory_mb: 'run_memory_limit'
})

/**
 * A request → an {@link ExecRequest}. The files after the first are written beside the program
 * under their names. A Python program given `args` or other files is written as its file too and
 * run by a few lines that give it what `python3 main.py ARGS` would: `sys.argv` (its name, then
 * the args) and its directory first on `sys.path` (its other files import).
 */
export function toExecRequest(req: PistonRequest, maxTimeoutMs: number): ExecRequest {
  const language = languageOf(req.language) as Language
  const exec: ExecRequest = { language, code: programOf(req), ...limitsOf(req, maxTimeoutMs) }
  if (req.stdin !== undefined && req.stdin !== '') exec.stdin = req.stdin
  const files: Record<string, string> = {}
  req.files.forEach((f, i) => {
    if (i > 0) files[f.name ?? DEFAULT_NAME(i)] = decode(f).toString('base64')
  })
  if (language === 'python' && ((req.args?.length ?? 0) > 0 || req.files.length > 1)) {
    const name = req.files[0]?.name ?? DEFAULT_NAME(0)
    files[name] = Buffer.from(exec.code).toString('base64')
    const path = JSON.stringify(name)
    exec.code =
      `import sys\nsys.argv = ${JSON.stringify([name, ...(req.args ?? [])])}\nsys.path.insert(0, '')\n` +
      `exec(compile(open(${path}, encoding='utf-8').read(), ${path}, 'exec'), {'__name__': '__main__', '__file__': ${path}, '__builtins__': __builtins__})\n`
  }
  if (Object.keys(files).length > 0) exec.files = files
  return exec
}

/** Piston's words for how a run ended, by sandfleet status (the run's answer). */
const ENDINGS: Readonly<Partial<Record<ExecResult['status'], { status: string; message: string }>>> = Object.freeze({
  timeout: { status: 'TO', message: 'Time limit exceeded' },
  memory: { status: 'MO', message: 'Memory limit exceeded' },
  killed: { status: 'SG', message: 'Killed' }
})

/** A sandfleet result of a program's run → Piston's `run` (its statuses: ok, error, timeout, memory, killed). */
export function toRun(result: ExecResult): PistonRun {
  const stderr = result.stderr + truncationNote(result)
  const ending = ENDINGS[result.status]
  const run: PistonRun = {
    stdout: result.stdout,
    stderr,
    output: result.stdout + stderr,
    code: result.exit_code,
    signal: null,
    message: null,
    status: null,
    wall_time: Math.round(result.duration_ms)
  }
  if (result.cpu_ms !== undefined) run.cpu_time = Math.round(result.cpu_ms)
  if (ending !== undefined) return { ...run, code: null, signal: 'SIGKILL', ...ending }
  if (result.status === 'error' || (result.exit_code ?? 0) !== 0)
    return { ...run, status: 'RE', message: `Exited with error status ${String(result.exit_code ?? 1)}` }
  return run
}

/** The HTTP status a fleet fault or refusal is answered with (`undefined`: the program ran, a 200). */
export function faultStatus(status: ExecResult['status']): number | undefined {
  switch (status) {
    case 'overloaded':
    case 'queue_timeout':
      return 503
    case 'infra_error':
      return 500
    case 'invalid_request':
      return 400
    default:
      return undefined
  }
}

/** A sandfleet result → Piston's answer: the run, with the language and version it ran as. */
export function toPistonResult(language: Language, version: string, result: ExecResult): PistonResult {
  return { language, version, run: toRun(result) }
}

/** A compile step as Piston's `compile` stage: code 0, or the compiler's code and status RE; TO past its limit. */
function toCompile(result: JudgeResult): PistonRun | undefined {
  const compile = result.compile
  if (compile === null) return undefined
  return toRun({
    status: execStatusOf(compile.status),
    stdout: compile.stdout,
    stderr: compile.stderr,
    exit_code: compile.exit_code ?? (compile.status === 'ok' ? 0 : null),
    duration_ms: compile.duration_ms,
    queue_ms: 0,
    truncated: { stdout: false, stderr: false },
    error: null,
    files: {},
    runner: result.runner,
    sandbox: result.sandbox,
    ...(compile.cpu_ms === undefined ? {} : { cpu_ms: compile.cpu_ms })
  })
}

/**
 * A judged run of a compiled program → Piston's answer: its `compile` stage and its `run`; when the compile failed,
 * `run` repeats the compile stage, as Piston answers it.
 */
export function judgedPistonResult(language: string, version: string, result: JudgeResult): PistonResult {
  const compile = toCompile(result)
  if (compileFailed(result) && compile !== undefined) return { language, version, compile, run: compile }
  const answer: PistonResult = { language, version, run: toRun(runOf(result)) }
  if (compile !== undefined) answer.compile = compile
  return answer
}
