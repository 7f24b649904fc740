/**
 * A judge run as one job a test, for a pool whose sandboxes do not judge a whole program (javascript's isolates;
 * Python where the backend is pyodide): each test an ordinary job of its language with the test's stdin (javascript
 * reads it as `sandfleet.stdin`), its output compared here; the first failing test stops the rest unless `run_all`
 * (then every test is queued at once). No compile step, no call tests, no checker: those need a sandbox that judges.
 */
import {
  mayHaveRun,
  type ExecResult,
  type JudgeResult,
  type JudgeTestResult,
  type Language,
  type ResolvedJudgeRequest,
  type TestVerdict
} from '@sandfleet/protocol'
import type { JudgeTested, PooledJob } from '../sandbox/contract.ts'
import { testResultOf, testVerdictOf } from './verdicts.ts'

/** What a judge by jobs needs of the runner. */
export interface ExecJudgeContext {
  /** Most bytes kept of each test's stdout and stderr (past it: `output_limit`). */
  readonly maxOutputBytes: number
  /** Most bytes of each given back in the result. */
  readonly echoBytes: number
  /** Hands a job to its language's pool: `done` gets its result once. */
  submit(job: PooledJob, done: (result: ExecResult) => void): void
  /** The first job's deadline for waiting and the judge's tenant. */
  readonly place: { readonly startBy: number; readonly tenant: string | undefined }
  /** How long a later test's job may wait, from when it is handed over (the runner's `queueTimeoutMs`). */
  readonly queueTimeoutMs: number
}

const FLEET: ReadonlySet<string> = new Set(['overloaded', 'queue_timeout', 'infra_error'])

/** What a test's job did, as a sandbox that judges would have said it. */
function testedOf(index: number, r: ExecResult): JudgeTested {
  const status =
    r.status === 'ok' || r.status === 'error' || r.status === 'timeout' || r.status === 'memory' ? r.status : 'killed'
  const tested: JudgeTested = {
    index,
    status,
    exit_code: r.exit_code,
    stdout: r.stdout,
    stderr: r.stderr,
    duration_ms: r.duration_ms,
    truncated: r.truncated,
    error: r.error
  }
  return r.cpu_ms === undefined ? tested : { ...tested, cpu_ms: r.cpu_ms }
}

/** The job of test `index`, to start by `startBy`. */
function jobOf(judge: ResolvedJudgeRequest, index: number, ctx: ExecJudgeContext, startBy: number): PooledJob {
  return {
    startBy,
    tenant: ctx.place.tenant,
    request: {
      language: judge.language as Language,
      code: judge.code,
      stdin: judge.tests[index].stdin,
      timeout_ms: judge.timeout_ms,
      memory_mb: judge.memory_mb,
      files: {},
      fetch_files: [],
      isolation: judge.isolation
    },
    maxOutputBytes: ctx.maxOutputBytes
  }
}

/** Judges `judge` one job a test; resolves with its result (never rejects). */
export async function judgeByJobs(
  judge: ResolvedJudgeRequest,
  requestId: string | undefined,
  ctx: ExecJudgeContext
): Promise<JudgeResult> {
  // The call's deadline holds for the jobs handed over at once (the first, or every one with run_all); a later test's
  // job waits no longer than any job the runner takes.
  const run = (i: number): Promise<ExecResult> =>
    new Promise((resolve) => {
      const startBy = i === 0 || judge.run_all ? ctx.place.startBy : performance.now() + ctx.queueTimeoutMs
      ctx.submit(jobOf(judge, i, ctx, startBy), resolve)
    })
  const results: Array<ExecResult | undefined> = []
  if (judge.run_all) results.push(...(await Promise.all(judge.tests.map((_, i) => run(i)))))
  else
    for (let i = 0; i < judge.tests.length; i++) {
      const r = await run(i)
      results.push(r)
      if (FLEET.has(r.status)) break
      if (testVerdictOf(testedOf(i, r), judge.tests[i], judge.compare) !== 'accepted') break
    }
  const first = results[0]
  const result: JudgeResult = {
    verdict: 'accepted',
    passed: 0,
    total: judge.tests.length,
    language: judge.language,
    compile: null,
    tests: [],
    duration_ms: results.reduce((sum, r) => sum + (r?.duration_ms ?? 0), 0),
    queue_ms: first?.queue_ms ?? 0,
    runner: first?.runner ?? '',
    sandbox: first?.sandbox ?? ''
  }
  if (requestId !== undefined) result.request_id = requestId
  const fault = results.find((r) => r !== undefined && FLEET.has(r.status))
  if (fault !== undefined)
    return {
      ...result,
      verdict: fault.status as JudgeResult['verdict'],
      error: { type: fault.error?.type ?? 'SF_ERR_RUNNER_SANDBOX_FAILED', message: fault.error?.message ?? '' },
      // a test that ran before (or beside) the fault ran the program
      maybe_ran: results.some((r) => r !== undefined && mayHaveRun(r))
    }
  // Python without a compile step of its own: code that does not compile fails its first test with a SyntaxError.
  if (judge.language === 'python' && first?.error?.type === 'SyntaxError')
    return {
      ...result,
      verdict: 'compile_error',
      compile: {
        status: 'error',
        stdout: '',
        stderr: first.stderr,
        exit_code: first.exit_code,
        duration_ms: first.duration_ms,
        cached: false
      },
      tests: judge.tests.map(() => ({ verdict: 'skipped' as const })),
      error: { type: 'CompileError', message: 'the compile step ended error' }
    }
  for (let i = 0; i < judge.tests.length; i++) {
    const r = results[i]
    if (r === undefined || (result.verdict !== 'accepted' && !judge.run_all)) {
      result.tests.push({ verdict: 'skipped' })
      continue
    }
    const tested = testedOf(i, r)
    const verdict: TestVerdict = testVerdictOf(tested, judge.tests[i], judge.compare)
    const test: JudgeTestResult = testResultOf(tested, verdict, ctx.echoBytes)
    result.tests.push(test)
    if (verdict === 'accepted') result.passed++
    else if (result.verdict === 'accepted') result.verdict = verdict as JudgeResult['verdict']
  }
  return result
}
