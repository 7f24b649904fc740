/**
 * One judge in a sandbox that judges (an executor's: process, docker, unsafe): the job that carries it (its programs,
 * binaries from the compile cache where it has them, each test's stdin or call; a checker's answers only with a
 * checker), the sink that takes each run's frame as it ends (its verdict found here, the stop asked for at the first
 * failing test unless `run_all`, a compiler's output kept in the cache, with what its compile cost) and, once the job
 * is answered, the result. A cached binary whose compile took longer than the request's `compile_timeout_ms` is not
 * shipped: the judge is answered as that compile under that limit would end, without a job when nothing else would
 * compile first.
 */
import {
  mayHaveRun,
  GRACES,
  checkerTimeoutMs,
  compileArgv,
  judgeLanguageRow,
  type ExecResult,
  type JudgeCompileResult,
  type JudgeLanguageRow,
  type JudgeResult,
  type JudgeTestResult,
  type ResolvedJudgeRequest,
  type TestVerdict
} from '@sandfleet/protocol'
import type { JudgeCompiled, JudgeProgram, JudgeSink, JudgeTested, JudgeWork, PooledJob } from '../sandbox/contract.ts'
import { compileKeyOf, type CachedCompile, type CompileCache } from './compile-cache.ts'
import {
  cachedCompile,
  checkerFault,
  compileResultOf,
  pastCompileLimit,
  testResultOf,
  testVerdictOf
} from './verdicts.ts'

/**
 * Past a step's own limit (a compile, or a test and its check), what the sandbox may take before the step's frame
 * comes: the soft stop, a reused process's verdict (at most 2 s) and the clean-up. The pool's hard deadline adds its
 * own grace to it.
 */
export const JUDGE_STEP_SLACK_MS = 2500
/** The address space a compiler may map (g++ maps a precompiled header of ~100 MiB, and grows with the code). */
export const COMPILE_MEMORY_MB = 2048

/** What a judge in a sandbox needs of the runner. */
export interface SandboxJudgeContext {
  readonly cache: CompileCache
  /** The compiler's version of each compiled language (the compile cache's key), as its sandboxes report it. */
  readonly versions: ReadonlyMap<string, string>
  /** Most bytes kept of each run's stdout and stderr (a test past it: `output_limit`). */
  readonly maxOutputBytes: number
  /** Most bytes of each run's stdout and stderr given back in the result. */
  readonly echoBytes: number
  /** Hands the job to its pool: `done` gets its result once. */
  submit(job: PooledJob, done: (result: ExecResult) => void): void
  /** Its deadline for waiting and its tenant. */
  readonly place: { readonly startBy: number; readonly tenant: string | undefined }
  /** Tests the sandbox ran past the first failing one before the stop reached it (`run_all` false), per judge. */
  ranPastStop?(tests: number): void
}

/** A program of the judge, the key its binary is cached under (a compiled language), and the cache's entry of it. */
interface Ready {
  program: JudgeProgram
  key?: string
  /** The cache's entry, when it holds one (its binary is shipped only when its compile fits the request's limit). */
  cached?: CachedCompile
}

/**
 * The program in `code` of `row`, with the cache's binary when it holds one whose compile took no longer than
 * `compileTimeoutMs` (one that took longer is left out: a compile under this limit would not have made it).
 */
function programOf(row: JudgeLanguageRow, code: string, ctx: SandboxJudgeContext, compileTimeoutMs: number): Ready {
  const argv = compileArgv(row)
  if (row.runtime === 'python' || argv === undefined)
    return { program: { runtime: 'python', source: row.source, code } }
  const key = compileKeyOf({ language: row.name, version: ctx.versions.get(row.name) ?? '', argv, source: code })
  const cached = ctx.cache.get(key)
  const program: JudgeProgram = {
    runtime: 'binary',
    source: row.source,
    code,
    compile: argv,
    output: row.compile?.output,
    run: row.run
  }
  if (cached === undefined) return { program, key }
  if (pastCompileLimit(cached, compileTimeoutMs)) return { program, key, cached }
  return { program: { ...program, binary: cached.binary }, key, cached }
}

/** What the sandbox said of a judge, as its frames came (reset when the judge starts again elsewhere). */
class Frames implements JudgeSink {
  compile: JudgeCompiled | undefined
  checker: JudgeCompiled | undefined
  runs: Array<JudgeTested | undefined> = []
  verdicts: Array<TestVerdict | undefined> = []
  /** The first test that failed, by index. */
  firstFailure = Infinity
  /** Why the checker says nothing of the program, when it does not. */
  checkerFault: string | undefined
  /** Tests that ran after the first failing one (the stop's lag: the executor runs on until it reads the stop). */
  ranPastStop = 0

  constructor(
    private readonly judge: ResolvedJudgeRequest,
    private readonly cache: CompileCache,
    private readonly keys: { program?: string; checker?: string }
  ) {}

  begin(): void {
    this.compile = this.checker = this.checkerFault = undefined
    this.runs = []
    this.verdicts = []
    this.firstFailure = Infinity
    this.ranPastStop = 0
  }

  compiled(step: JudgeCompiled): void {
    if (step.step === 'checker') this.checker = step
    else this.compile = step
    const key = this.keys[step.step]
    if (step.status === 'ok' && step.binary !== undefined && key !== undefined)
      this.cache.set(
        key,
        step.cpu_ms === undefined
          ? { binary: step.binary, duration_ms: step.duration_ms }
          : { binary: step.binary, duration_ms: step.duration_ms, cpu_ms: step.cpu_ms }
      )
  }

  tested(test: JudgeTested): boolean {
    const spec = this.judge.tests[test.index]
    if (spec === undefined) return true
    if (test.index > this.firstFailure && !this.judge.run_all) this.ranPastStop++
    this.runs[test.index] = test
    const fault = checkerFault(test)
    if (fault !== undefined) {
      this.checkerFault ??= fault
      return true
    }
    const verdict = testVerdictOf(test, spec, this.judge.compare)
    this.verdicts[test.index] = verdict
    if (verdict !== 'accepted') this.firstFailure = Math.min(this.firstFailure, test.index)
    return verdict !== 'accepted' && !this.judge.run_all
  }
}

/** The job of `judge`: the pool bounds each of its steps by `request.timeout_ms` (see JUDGE_STEP_SLACK_MS). */
function jobOf(
  judge: ResolvedJudgeRequest,
  work: JudgeWork,
  checker: boolean,
  place: SandboxJudgeContext['place']
): PooledJob {
  const testMs = judge.timeout_ms + (checker ? GRACES.softStopMs + checkerTimeoutMs(judge.timeout_ms) : 0)
  const compileMs = work.program.runtime === 'binary' || checker ? judge.compile_timeout_ms : 0
  return Object.freeze({
    startBy: place.startBy,
    tenant: place.tenant,
    request: Object.freeze({
      language: 'python' as const,
      code: '',
      stdin: '',
      timeout_ms: Math.max(testMs, compileMs) + JUDGE_STEP_SLACK_MS,
      memory_mb: judge.memory_mb,
      files: {},
      fetch_files: [],
      isolation: judge.isolation
    }),
    maxOutputBytes: work.maxOutputBytes,
    judge: work
  })
}

/** The tests' results and the verdict, from the frames of a judge whose job was answered `status`. */
function verdictOf(
  judge: ResolvedJudgeRequest,
  frames: Frames,
  status: ExecResult['status'],
  echoBytes: number
): Pick<JudgeResult, 'verdict' | 'passed' | 'tests' | 'error'> {
  if (frames.checkerFault !== undefined)
    return {
      verdict: 'invalid_request',
      passed: 0,
      tests: judge.tests.map(() => ({ verdict: 'skipped' as const })),
      error: { type: 'SF_ERR_RUNNER_CHECKER', message: frames.checkerFault }
    }
  const tests: JudgeResult['tests'] = []
  let verdict: JudgeResult['verdict'] = 'accepted'
  let passed = 0
  for (let i = 0; i < judge.tests.length; i++) {
    const tested = frames.runs[i]
    const v = frames.verdicts[i]
    if (i > frames.firstFailure && !judge.run_all) {
      tests.push({ verdict: 'skipped' })
      continue
    }
    if (tested === undefined || v === undefined) {
      // Not run: skipped after a failure; else the judge ended before it (its sandbox stopped answering, or could not
      // be put back after the test before: what the program left), which is this test's verdict.
      if (verdict !== 'accepted') {
        tests.push({ verdict: 'skipped' })
        continue
      }
      verdict = status === 'timeout' ? 'time_limit' : 'runtime_error'
      const message =
        status === 'timeout'
          ? "the sandbox did not answer within the test's limits; it was stopped and is replaced"
          : 'the sandbox could not be put back after the test before this one (what the program left): the judge ended'
      tests.push({
        verdict,
        stdout: '',
        stderr: '',
        exit_code: null,
        duration_ms: 0,
        error: { type: status === 'timeout' ? 'Timeout' : 'SandboxRetired', message }
      })
      for (i++; i < judge.tests.length; i++) tests.push({ verdict: 'skipped' })
      break
    }
    const result: JudgeTestResult = testResultOf(tested, v, echoBytes)
    tests.push(result)
    if (v === 'accepted') passed++
    else if (verdict === 'accepted') verdict = v as JudgeResult['verdict']
  }
  return { verdict, passed, tests }
}

/** Judges `judge` in a sandbox of its pool; resolves with its result (never rejects). */
export function judgeInSandbox(
  judge: ResolvedJudgeRequest,
  requestId: string | undefined,
  ctx: SandboxJudgeContext
): Promise<JudgeResult> {
  const row = judgeLanguageRow(judge.language) as JudgeLanguageRow
  const program = programOf(row, judge.code, ctx, judge.compile_timeout_ms)
  const checkerRow = judge.compare.kind === 'checker' ? judgeLanguageRow(judge.compare.language) : undefined
  const checker =
    checkerRow !== undefined && judge.compare.kind === 'checker'
      ? programOf(checkerRow, judge.compare.code, ctx, judge.compile_timeout_ms)
      : undefined
  const answered = cachedPastLimit(judge, requestId, program, checker)
  if (answered !== undefined) return Promise.resolve(answered)
  const frames = new Frames(judge, ctx.cache, { program: program.key, checker: checker?.key })
  const work: JudgeWork = {
    program: program.program,
    ...(checker === undefined
      ? {}
      : {
          checker: checker.program,
          answers: judge.tests.map((t) => (t.expected !== undefined && 'text' in t.expected ? t.expected.text : ''))
        }),
    tests: judge.tests.map((t) =>
      t.call === undefined
        ? { stdin: t.stdin }
        : { stdin: t.stdin, call: [t.call.function, JSON.stringify(t.call.args)] }
    ),
    timeoutMs: judge.timeout_ms,
    memoryMb: judge.memory_mb,
    compileTimeoutMs: judge.compile_timeout_ms,
    compileMemoryMb: COMPILE_MEMORY_MB,
    checkerTimeoutMs: checkerTimeoutMs(judge.timeout_ms),
    maxOutputBytes: ctx.maxOutputBytes,
    stopOnFailure: !judge.run_all,
    // the runner's comparisons pace the sandbox when they can stop it: a failing test costs at most one test more
    ackWindow: !judge.run_all && checker === undefined && judge.tests.some((t) => t.expected !== undefined) ? 2 : 0,
    sink: frames
  }
  return new Promise((resolve) => {
    ctx.submit(jobOf(judge, work, checker !== undefined, ctx.place), (r) => {
      if (frames.ranPastStop > 0) ctx.ranPastStop?.(frames.ranPastStop)
      const shipped = program.program.binary !== undefined ? program.cached : undefined
      resolve(resultOf(judge, requestId, frames, shipped, r, ctx.echoBytes))
    })
  })
}

/** The result's fields before its verdict: what the job `r` (none: no job ran) says of where and how long. */
function baseOf(judge: ResolvedJudgeRequest, requestId: string | undefined, r?: ExecResult): JudgeResult {
  const base: JudgeResult = {
    verdict: 'accepted',
    passed: 0,
    total: judge.tests.length,
    language: judge.language,
    compile: null,
    tests: [],
    duration_ms: r?.duration_ms ?? 0,
    queue_ms: r?.queue_ms ?? 0,
    runner: r?.runner ?? '',
    sandbox: r?.sandbox ?? ''
  }
  if (requestId !== undefined) base.request_id = requestId
  return base
}

/** Why a cached compile's result is not `ok`: the compile that made it took longer than this judge's limit. */
function pastLimitNote(c: JudgeCompileResult, judge: ResolvedJudgeRequest): string {
  return c.cached && c.status === 'time_limit'
    ? ` (the compile of this source took ${Math.round(c.duration_ms)} ms, past compile_timeout_ms=${judge.compile_timeout_ms})`
    : ''
}

/**
 * The judge's result when a compile step did not end well (`compile`: the program's, `checker`: the checker's, when
 * they were compiled or came from the cache); undefined when both did.
 */
function compileFailure(
  base: JudgeResult,
  judge: ResolvedJudgeRequest,
  compile: JudgeCompileResult | null,
  checker: JudgeCompileResult | undefined
): JudgeResult | undefined {
  const skipped = judge.tests.map(() => ({ verdict: 'skipped' as const }))
  if (compile !== null && compile.status !== 'ok')
    return {
      ...base,
      verdict: 'compile_error',
      compile,
      tests: skipped,
      error: {
        type: 'CompileError',
        message: `the compile step ended ${compile.status}${pastLimitNote(compile, judge)}`
      }
    }
  if (checker !== undefined && checker.status !== 'ok')
    return {
      ...base,
      verdict: 'invalid_request',
      compile,
      tests: skipped,
      error: {
        type: 'SF_ERR_RUNNER_CHECKER',
        message: `the checker did not compile (${checker.status})${pastLimitNote(checker, judge)}: ${checker.stderr.slice(0, 2000)}`
      }
    }
  return undefined
}

/**
 * The judge's result, answered with no job, when the cache holds a binary whose compile took longer than the judge's
 * `compile_timeout_ms` and no compile would come before that one's: the program's, or the checker's after a program the
 * cache gave (a checker's after a program to compile is compiled again in the sandbox, as on a cold cache).
 */
function cachedPastLimit(
  judge: ResolvedJudgeRequest,
  requestId: string | undefined,
  program: Ready,
  checker: Ready | undefined
): JudgeResult | undefined {
  const limit = judge.compile_timeout_ms
  const compile = program.cached === undefined ? null : cachedCompile(program.cached, limit)
  if (compile?.status === 'ok' && checker?.cached !== undefined && pastCompileLimit(checker.cached, limit))
    return compileFailure(baseOf(judge, requestId), judge, compile, cachedCompile(checker.cached, limit))
  return compile?.status === 'time_limit'
    ? compileFailure(baseOf(judge, requestId), judge, compile, undefined)
    : undefined
}

/** The judge's result, from its job's result `r`, the frames its sandbox sent and the cache's entry it shipped. */
function resultOf(
  judge: ResolvedJudgeRequest,
  requestId: string | undefined,
  frames: Frames,
  shipped: CachedCompile | undefined,
  r: ExecResult,
  echoBytes: number
): JudgeResult {
  const base = baseOf(judge, requestId, r)
  // A fault of the fleet (never the program's): the job never ran, or its executor went away while it ran.
  if (r.status === 'overloaded' || r.status === 'queue_timeout' || r.status === 'infra_error' || r.status === 'killed')
    return {
      ...base,
      verdict: r.status === 'killed' ? 'infra_error' : r.status,
      error: { type: r.error?.type ?? 'SF_ERR_RUNNER_SANDBOX_FAILED', message: r.error?.message ?? '' },
      // the pool's word (a stall may have run it); an executor that went away went with the program
      maybe_ran: r.status === 'killed' ? true : mayHaveRun(r)
    }
  const compile: JudgeCompileResult | null =
    frames.compile !== undefined
      ? compileResultOf(frames.compile)
      : shipped !== undefined
        ? cachedCompile(shipped, judge.compile_timeout_ms)
        : null
  const checker = frames.checker !== undefined ? compileResultOf(frames.checker) : undefined
  return (
    compileFailure(base, judge, compile, checker) ?? {
      ...base,
      compile,
      ...verdictOf(judge, frames, r.status, echoBytes)
    }
  )
}
