/**
 * The judge corpus (judge-corpus.ts) on real runners: the process backend (bubblewrap, the host's compilers) and the
 * docker backend (the sandbox image's: `SANDFLEET_TEST_JUDGE_IMAGE`, default sandfleet/python:1, with this checkout's
 * executor bound over the image's), each at fork and at reuse for Python; the compile cache; javascript through its
 * isolates; the runner's HTTP routes. A case's verdict, and each test's, must be what its row says.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { JudgeResultSchema, type JudgeResult } from '@sandfleet/protocol'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Runner, runnerConfig, buildRunnerApp, type RunnerConfigInput } from '../../src/index.ts'
import { REPO_EXECUTOR } from '../helpers/docker.ts'
import { COMPILED_CASES, PYTHON_CASES, type JudgeCase } from './judge-corpus.ts'

const resultSchema = TypeCompiler.Compile(JudgeResultSchema)
const IMAGE = process.env.SANDFLEET_TEST_JUDGE_IMAGE ?? 'sandfleet/python:1'

function dockerUp(): boolean {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

async function check(runner: Runner, c: JudgeCase, isolation?: 'fork' | 'reuse'): Promise<JudgeResult> {
  const request = isolation === undefined || c.request.language !== undefined ? c.request : { ...c.request, isolation }
  const r = await runner.judge(request)
  const where = `${c.name} (${JSON.stringify(r).slice(0, 1500)})`
  assert.ok(resultSchema.Check(r), `the result is the contract's: ${where}`)
  assert.equal(r.verdict, c.verdict, where)
  if (c.tests !== undefined)
    assert.deepEqual(
      r.tests.map((t) => t.verdict),
      c.tests,
      where
    )
  assert.equal(r.total, c.request.tests?.length ?? c.request.input_output?.inputs.length)
  assert.equal(r.passed, r.tests.filter((t) => t.verdict === 'accepted').length)
  c.check?.(r)
  return r
}

/** Every case on a runner of `config`; the Python ones at each isolation level; then the compile cache. */
async function corpus(config: RunnerConfigInput): Promise<void> {
  const runner = new Runner(
    runnerConfig({ poolSize: 2, maxSessions: 0, languages: ['python'], maxJudgeOutputBytes: 1 << 20, ...config })
  )
  await runner.start()
  try {
    for (const isolation of ['fork', 'reuse'] as const)
      await Promise.all(PYTHON_CASES.map(async (c) => await check(runner, c, isolation)))
    const compiled = await Promise.all(COMPILED_CASES.map(async (c) => await check(runner, c)))
    // The compile cache: the same source again is shipped, not compiled, with what its compile cost; a new one is
    // compiled.
    const again = await check(runner, COMPILED_CASES[0])
    assert.equal(again.compile?.cached, true)
    const coldMs = compiled.filter((r) => r.compile?.cached === false).map((r) => r.compile?.duration_ms)
    assert.ok(
      coldMs.includes(again.compile?.duration_ms),
      `the duration of a compile of it: ${again.compile?.duration_ms}`
    )
    const other = await runner.judge({
      ...COMPILED_CASES[0].request,
      code: `${String(COMPILED_CASES[0].request.code)}\n`
    })
    assert.equal(other.compile?.cached, false)
    // A compile_timeout_ms its cached compile would not fit in: the verdict a cold cache gives, a compile time limit.
    const late = await runner.judge({ ...COMPILED_CASES[0].request, compile_timeout_ms: 1 })
    const cold = await runner.judge({
      ...COMPILED_CASES[0].request,
      code: `${String(COMPILED_CASES[0].request.code)}\n\n`,
      compile_timeout_ms: 1
    })
    for (const [r, cached] of [
      [late, true],
      [cold, false]
    ] as const) {
      assert.equal(r.verdict, 'compile_error', JSON.stringify(r))
      assert.equal(r.compile?.status, 'time_limit')
      assert.equal(r.compile?.cached, cached)
    }
    assert.equal(late.compile?.duration_ms, again.compile?.duration_ms)
    const metrics = await runner.registry.metrics()
    assert.match(metrics, /sandfleet_runner_judge_compile_cache_total\{result="hit"[^}]*\} [1-9]/)
    assert.match(metrics, /sandfleet_runner_judges_total\{verdict="compile_error",language="cpp"[^}]*\} [1-9]/)
    assert.match(metrics, /sandfleet_runner_judge_tests_total\{verdict="skipped",language="python"[^}]*\} [1-9]/)
    // the sandbox judges on after every case: a last one is right
    assert.equal((await runner.judge(COMPILED_CASES[0].request)).verdict, 'accepted')
    const languages = runner.info().judge_languages?.map((l) => `${l.name} ${l.version}`)
    assert.ok(
      languages?.some((l) => /^cpp \d+\.\d+/.test(l)),
      `info lists cpp with its version: ${String(languages)}`
    )
    for (const l of languages ?? []) assert.match(l, /^[a-z]+ \d+(\.\d+)+$/, 'each version a bare version number')
  } finally {
    await runner.close()
  }
}

test('the judge corpus on the process backend (bubblewrap, the host compilers)', { timeout: 600_000 }, async () => {
  await corpus({ backend: 'process' })
})

test(
  'the judge corpus on the docker backend (the sandbox image)',
  { timeout: 900_000, skip: dockerUp() ? false : `no docker engine or no image ${IMAGE}` },
  async () => {
    await corpus({ backend: 'docker', dockerImage: IMAGE, executorPath: REPO_EXECUTOR, sandboxMemoryMb: 2048 })
  }
)

test('javascript is judged one isolate run a test, its stdin as sandfleet.stdin', { timeout: 120_000 }, async () => {
  const runner = new Runner(
    runnerConfig({ backend: 'process', poolSize: 1, maxSessions: 0, languages: ['javascript'] })
  )
  await runner.start()
  try {
    const r = await runner.judge({
      language: 'js',
      code: 'const [a, b] = sandfleet.stdin.trim().split(" ").map(Number)\nconsole.log(a + b)',
      tests: [
        { stdin: '1 2', expected: '3' },
        { stdin: '2 2', expected: '5' },
        { stdin: '4 4', expected: '8' }
      ]
    })
    assert.equal(r.verdict, 'wrong_answer')
    assert.deepEqual(
      r.tests.map((t) => t.verdict),
      ['accepted', 'wrong_answer', 'skipped']
    )
    assert.equal(r.compile, null)
    const refused = await runner.judge({ language: 'cpp', code: 'int main(){}', tests: [{}] })
    assert.equal(refused.verdict, 'invalid_request')
    assert.equal(refused.error?.type, 'SF_ERR_RUNNER_LANGUAGE')
  } finally {
    await runner.close()
  }
})

test(
  "the runner's /v1/judge routes: a result, a 400 naming the field, a streamed batch",
  { timeout: 120_000 },
  async () => {
    const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1, maxSessions: 0, languages: ['python'] }))
    await runner.start()
    const app = buildRunnerApp(runner)
    try {
      const one = await app.inject({
        method: 'POST',
        url: '/v1/judge',
        payload: { code: 'print(input())', tests: [{ stdin: 'x', expected: 'x' }] }
      })
      assert.equal(one.statusCode, 200)
      assert.equal((one.json() as JudgeResult).verdict, 'accepted')
      const bad = await app.inject({
        method: 'POST',
        url: '/v1/judge',
        payload: { code: 'x', input_output: { inputs: ['1'], outputs: [] } }
      })
      assert.equal(bad.statusCode, 400)
      assert.equal(bad.json().error.field, 'input_output/outputs')
      const schema = await app.inject({
        method: 'POST',
        url: '/v1/judge',
        payload: { code: 'x', tests: [], run_all: 1 }
      })
      assert.equal(schema.statusCode, 400)
      const batch = await app.inject({
        method: 'POST',
        url: '/v1/judge/batch',
        headers: { accept: 'application/x-ndjson' },
        payload: {
          requests: [
            { code: 'print(1)', tests: [{ expected: '1' }] },
            { code: 'print(2)', tests: [{ expected: '1' }] }
          ]
        }
      })
      assert.equal(batch.statusCode, 200)
      const lines = batch.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { index: number; result: JudgeResult })
      assert.deepEqual(lines.map((l) => [l.index, l.result.verdict]).sort(), [
        [0, 'accepted'],
        [1, 'wrong_answer']
      ])
      const refusedItem = await app.inject({
        method: 'POST',
        url: '/v1/judge/batch',
        payload: {
          requests: [
            { code: 'x', tests: [{}] },
            { code: 'x', tests: [{}], timeout_ms: 10_000_000 }
          ]
        }
      })
      assert.equal(refusedItem.statusCode, 400)
    } finally {
      await app.close()
      await runner.close()
    }
  }
)
