/**
 * One judge in a sandbox (sandbox-judge.ts) against a scripted sandbox: what its job ships from the compile cache, and
 * the verdict a request gets whatever the cache holds (a cached compile longer than the request's `compile_timeout_ms`
 * is answered as that compile under that limit ends, a time limit, without a job).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  resolveJudgeRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type ResolvedJudgeRequest
} from '@sandfleet/protocol'
import { CompileCache } from '../../src/judge/compile-cache.ts'
import { judgeInSandbox, type SandboxJudgeContext } from '../../src/judge/sandbox-judge.ts'
import type { JudgeRun, JudgeWork, PooledJob } from '../../src/sandbox/contract.ts'

const CPP = 'int main(){}\n'
const CHECKER = 'int main(){ return 0; }\n'

/** The scripted sandbox's compiler: a compile past the work's compileTimeoutMs is stopped there. */
interface Compiler {
  /** The wall time of a compile of `code`, in ms. */
  took: (code: string) => number
}

/** A run's frame fields. */
function run(status: JudgeRun['status'], durationMs: number, over: Partial<JudgeRun> = {}): JudgeRun {
  return {
    status,
    exit_code: status === 'ok' ? 0 : null,
    stdout: '',
    stderr: '',
    duration_ms: durationMs,
    cpu_ms: durationMs / 2,
    truncated: { stdout: false, stderr: false },
    error: status === 'timeout' ? { type: 'Timeout', message: 'the run exceeded timeout_ms' } : null,
    ...over
  }
}

/** A sandbox that compiles as `compiler` says (under the work's compileTimeoutMs) and runs each test to an ok exit. */
function scriptedContext(cache: CompileCache, compiler: Compiler) {
  const jobs: JudgeWork[] = []
  const ctx: SandboxJudgeContext = {
    cache,
    versions: new Map([['cpp', '12.2.0']]),
    maxOutputBytes: 1 << 16,
    echoBytes: 1 << 16,
    place: { startBy: performance.now() + 60_000, tenant: undefined },
    submit(job: PooledJob, done: (result: ExecResult) => void) {
      const work = job.judge as JudgeWork
      jobs.push(work)
      const sink = work.sink
      sink.begin()
      const end = (): void => {
        done({
          status: 'ok',
          stdout: '',
          stderr: '',
          exit_code: 0,
          duration_ms: 5,
          queue_ms: 0,
          truncated: { stdout: false, stderr: false },
          error: null,
          files: {},
          runner: 'r',
          sandbox: 's'
        })
      }
      for (const [step, program] of [
        ['program', work.program],
        ['checker', work.checker]
      ] as const) {
        if (program === undefined || program.binary !== undefined || program.runtime !== 'binary') continue
        const took = compiler.took(program.code)
        if (took > work.compileTimeoutMs) {
          sink.compiled({ step, ...run('timeout', work.compileTimeoutMs) })
          end()
          return
        }
        sink.compiled({ step, ...run('ok', took), binary: Buffer.from(`ELF ${program.code}`) })
      }
      work.tests.forEach((_, index) => sink.tested({ index, ...run('ok', 1) }))
      end()
    }
  }
  return { ctx, jobs }
}

function judge(request: Partial<JudgeRequest>): ResolvedJudgeRequest {
  return resolveJudgeRequest({ language: 'cpp', code: CPP, tests: [{ stdin: '' }, { stdin: '' }], ...request })
}

/** What a trainer compares of two results: the verdict, the compile's status, each test's verdict. */
function outcome(r: JudgeResult): string {
  return `${r.verdict} ${r.compile?.status} ${r.tests.map((t) => t.verdict).join(',')}`
}

test('a hit reports the compile that made the binary: cached, its duration and CPU time', async () => {
  const cache = new CompileCache(1 << 20)
  const { ctx, jobs } = scriptedContext(cache, { took: () => 3000 })
  const cold = await judgeInSandbox(judge({}), undefined, ctx)
  assert.deepEqual([cold.verdict, cold.compile?.cached, cold.compile?.duration_ms], ['accepted', false, 3000])
  const hit = await judgeInSandbox(judge({}), undefined, ctx)
  assert.equal(hit.verdict, 'accepted')
  assert.deepEqual(hit.compile, {
    status: 'ok',
    stdout: '',
    stderr: '',
    exit_code: null,
    duration_ms: 3000,
    cpu_ms: 1500,
    cached: true
  })
  assert.ok(jobs[1].program.binary !== undefined, 'the binary was shipped, not compiled again')
  assert.deepEqual(cache.stats().hits, 1)
})

test('a hit whose compile took longer than compile_timeout_ms is a compile time limit, as a cold cache gives', async () => {
  const compiler = { took: () => 3000 }
  const warm = new CompileCache(1 << 20)
  const w = scriptedContext(warm, compiler)
  await judgeInSandbox(judge({}), undefined, w.ctx)
  const short = judge({ compile_timeout_ms: 2000 })
  const hit = await judgeInSandbox(short, undefined, w.ctx)
  assert.equal(w.jobs.length, 1, 'no job: nothing compiled, nothing ran')
  const cold = await judgeInSandbox(short, undefined, scriptedContext(new CompileCache(1 << 20), compiler).ctx)
  assert.equal(outcome(cold), 'compile_error time_limit skipped,skipped')
  assert.equal(outcome(hit), outcome(cold))
  assert.equal(hit.compile?.cached, true)
  assert.equal(hit.compile?.duration_ms, 3000)
  assert.equal(hit.error?.type, cold.error?.type)
  assert.match(hit.error?.message ?? '', /time_limit .*took 3000 ms, past compile_timeout_ms=2000/)
  // a limit the compile fit in: the binary again
  const fits = await judgeInSandbox(judge({ compile_timeout_ms: 3000 }), undefined, w.ctx)
  assert.equal(outcome(fits), 'accepted ok accepted,accepted')
})

test("a cached checker whose compile took longer than compile_timeout_ms: the checker's refusal, as a cold cache gives", async () => {
  const compiler = { took: (code: string) => (code === CHECKER ? 3000 : 100) }
  const request = (over: Partial<JudgeRequest>): ResolvedJudgeRequest =>
    judge({ compare: { checker: { language: 'cpp', code: CHECKER } }, tests: [{ stdin: '', expected: '' }], ...over })
  const warm = new CompileCache(1 << 20)
  const w = scriptedContext(warm, compiler)
  assert.equal((await judgeInSandbox(request({}), undefined, w.ctx)).verdict, 'accepted')
  const short = request({ compile_timeout_ms: 2000 })
  const cold = await judgeInSandbox(short, undefined, scriptedContext(new CompileCache(1 << 20), compiler).ctx)
  assert.equal(cold.verdict, 'invalid_request')
  assert.equal(cold.error?.type, 'SF_ERR_RUNNER_CHECKER')
  // the program and the checker cached: answered without a job
  const hit = await judgeInSandbox(short, undefined, w.ctx)
  assert.equal(w.jobs.length, 1)
  assert.equal(outcome(hit), outcome(cold))
  assert.equal(hit.error?.type, cold.error?.type)
  assert.match(
    hit.error?.message ?? '',
    /the checker did not compile \(time_limit\) \(the compile of this source took 3000 ms/
  )
  // a program to compile first: its own compile error comes first, as on a cold cache
  const broken = { code: 'broken\n', compile_timeout_ms: 2000 }
  const brokenCompiler = { took: (code: string) => (code === CHECKER ? 3000 : code === 'broken\n' ? 5000 : 100) }
  const b = scriptedContext(warm, brokenCompiler)
  const brokenHit = await judgeInSandbox(request(broken), undefined, b.ctx)
  const brokenCold = await judgeInSandbox(
    request(broken),
    undefined,
    scriptedContext(new CompileCache(1 << 20), brokenCompiler).ctx
  )
  assert.equal(outcome(brokenHit), 'compile_error time_limit skipped')
  assert.equal(outcome(brokenHit), outcome(brokenCold))
  assert.equal(b.jobs[0].checker?.binary, undefined, 'the checker past the limit is not shipped: compiled again')
})
