/**
 * A program of a compiled language (C, C++) run once, as the compatible APIs run one (code-judge's `cpp`, Piston's
 * `c++`, SandboxFusion's `cpp`): a judge of one test with the stdin and no expected output, so the fleet compiles it
 * once in a sandbox and runs it as a judge runs a test, under the same limits. Its answer read back as the compile
 * step and the run, the run also as an {@link ExecResult}, which the APIs' mappers already turn into their shapes.
 */
import {
  failedResult,
  isRetriableVerdict,
  judgeLanguageRow,
  type CompileStatus,
  type ExecResult,
  type JudgeCompileResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeTestResult,
  type TestVerdict
} from '@sandfleet/protocol'
import type { JudgedLanguages } from '../runners/judged-languages.ts'

/** What a run of a compiled program asks for. */
export interface CompiledRun {
  language: string
  code: string
  stdin?: string | undefined
  timeout_ms?: number | undefined
  memory_mb?: number | undefined
  compile_timeout_ms?: number | undefined
}

/** The judge of one test that runs `run` once: compiled, then run on its stdin, passing when it ends well. */
export function runAsJudge(run: CompiledRun): JudgeRequest {
  const request: JudgeRequest = { language: run.language, code: run.code, tests: [{ stdin: run.stdin ?? '' }] }
  if (run.timeout_ms !== undefined) request.timeout_ms = run.timeout_ms
  if (run.memory_mb !== undefined) request.memory_mb = run.memory_mb
  if (run.compile_timeout_ms !== undefined) request.compile_timeout_ms = run.compile_timeout_ms
  return request
}

/** The run of a judged program: its one test, when it ran. */
export function testRun(result: JudgeResult): JudgeTestResult | undefined {
  const first = result.tests[0]
  return first === undefined || first.verdict === 'skipped' ? undefined : first
}

/** True when the compile step did not end `ok` (the program never ran). */
export function compileFailed(result: JudgeResult): result is JudgeResult & { compile: JudgeCompileResult } {
  return result.verdict === 'compile_error' && result.compile !== null && result.compile.status !== 'ok'
}

/** True when a runner refused the judge for its language (it judges no such language). */
export function isLanguageRefusal(result: JudgeResult): boolean {
  return result.verdict === 'invalid_request' && result.error?.type === 'SF_ERR_RUNNER_LANGUAGE'
}

/** An ExecResult's status for each judge step outcome it is not `error` for. */
const STEP_STATUS: Readonly<Partial<Record<TestVerdict | CompileStatus, ExecResult['status']>>> = Object.freeze({
  accepted: 'ok',
  wrong_answer: 'ok',
  ok: 'ok',
  time_limit: 'timeout',
  memory_limit: 'memory',
  output_limit: 'killed'
})

/**
 * A judge step's outcome (a test's verdict, a compile's status) as an {@link ExecResult}'s status: a program that ran
 * to its end is `ok` (its output judged or not), a limit the status of that limit, anything else `error`.
 */
export function execStatusOf(outcome: TestVerdict | CompileStatus): ExecResult['status'] {
  return STEP_STATUS[outcome] ?? 'error'
}

/**
 * A judged run as an {@link ExecResult}: the fleet's verdicts and `invalid_request` keep their status; a compile that
 * failed is an `error` whose stderr is the compiler's (its stdout too; the limit it met when it said nothing), taking
 * no run time; the run's verdict is its
 * status (`runtime_error` → `error`, `time_limit` → `timeout`, `memory_limit` → `memory`, `output_limit` → `killed`,
 * its stdout cut at the fleet's cap), with its output, exit code and times.
 */
export function runOf(result: JudgeResult): ExecResult {
  const extra = { runner: result.runner, sandbox: result.sandbox, queue_ms: result.queue_ms }
  if (isRetriableVerdict(result.verdict) || result.verdict === 'invalid_request')
    return failedResult(
      result.verdict as ExecResult['status'],
      result.error?.type ?? 'SF_ERR_GATEWAY_INTERNAL',
      result.error?.message ?? '',
      extra
    )
  if (compileFailed(result)) {
    const { status, stderr } = result.compile
    const message = status === 'error' ? 'the compiler refused the program' : `the compile step ended at its ${status}`
    return {
      ...failedResult('error', 'CompileError', message, extra),
      stdout: result.compile.stdout,
      // a compiler stopped at a limit may say nothing: the answer says which limit
      stderr: status === 'error' || stderr !== '' ? stderr : `${message}\n`,
      exit_code: result.compile.exit_code ?? 1,
      duration_ms: 0
    }
  }
  const test = testRun(result)
  if (test === undefined)
    return failedResult('infra_error', 'SF_ERR_GATEWAY_RUNNER_BAD_RESPONSE', 'the judge answered no run', extra)
  const status = execStatusOf(test.verdict)
  const exec: ExecResult = {
    status,
    stdout: test.stdout,
    stderr: test.stderr,
    exit_code: test.exit_code,
    duration_ms: test.duration_ms,
    queue_ms: result.queue_ms,
    truncated: test.truncated ?? { stdout: false, stderr: false },
    error:
      status === 'ok'
        ? null
        : {
            type: test.error?.type ?? test.signal ?? test.verdict,
            message: test.error?.message ?? (test.signal !== undefined ? `killed by ${test.signal}` : test.verdict)
          },
    files: {},
    runner: result.runner,
    sandbox: result.sandbox
  }
  if (test.cpu_ms !== undefined) exec.cpu_ms = test.cpu_ms
  if (test.verdict === 'output_limit') exec.truncated = { stdout: true, stderr: exec.truncated.stderr }
  return exec
}

/**
 * A signal's return code as a POSIX shell and Python's subprocess give it: -N (SIGABRT → -6); undefined for a name this
 * table does not know.
 */
export function signalReturnCode(signal: string | undefined): number | undefined {
  if (signal === undefined) return undefined
  const n = SIGNALS[signal]
  return n === undefined ? undefined : -n
}

const SIGNALS: Readonly<Record<string, number>> = Object.freeze({
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGXCPU: 24,
  SIGXFSZ: 25,
  SIGSYS: 31
})

/**
 * Whether the fleet judges `language` (a name or alias of the judge's table): true when a runner reports it, false when
 * the runners that answered do not, true when none answered (the fleet then answers for itself).
 */
export function fleetJudges(languages: JudgedLanguages, language: string): boolean {
  const row = judgeLanguageRow(language)
  if (row === undefined) return false
  return languages.byName === undefined || languages.byName.has(row.name)
}
