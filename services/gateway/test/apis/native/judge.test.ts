/**
 * `POST /v1/judge` and `/v1/judge/batch` through the gateway's pipeline: what the schema and the contract refuse is a
 * 400 naming the field, nothing judged; the deployment's limits hold a judge's program, checker and time limits; the
 * fleet's verdicts are retried on another runner and a verdict on the program never is; a batch answers in order or
 * streams; verdicts are counted in /metrics; /v1/info lists the languages judged with their versions.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import { failedJudgeResult, type JudgeRequest, type JudgeResult, type RunnerInfo } from '@sandfleet/protocol'
import { echoRunner, fakeInfo, judgingWith } from '../../helpers/fake-runner.ts'
import { localJudge } from '../../helpers/local-judge.ts'

/** A fake runner whose judge is `judge`; `judged` keeps every judge it was given. */
function judgeRunner(
  name: string,
  judge: (r: JudgeRequest) => Promise<JudgeResult>,
  languages: RunnerInfo['judge_languages'] = []
): RunnerClient & { judged: JudgeRequest[] } {
  const echo = echoRunner(name)
  const judging = judgingWith(name, judge)
  return {
    ...echo,
    ...judging,
    async info() {
      return { ...fakeInfo(await echo.load()), judge_languages: languages }
    }
  }
}

const SUM = 'a, b = map(int, input().split())\nprint(a + b)\n'
const sumTests = [
  { stdin: '1 2\n', expected: '3\n' },
  { stdin: '2 2\n', expected: '4' },
  { stdin: '5 5\n', expected: '11\n' }
]

async function withApp(
  clients: RunnerClient[],
  values: Record<string, unknown>,
  fn: (app: Awaited<ReturnType<typeof buildGatewayApp>>) => Promise<void>
): Promise<void> {
  const gateway = await buildGatewayApp({ config: loadGatewayConfig({ env: {}, values }), clients, logger: false })
  try {
    await gateway.app.ready()
    await fn(gateway)
  } finally {
    await gateway.app.close()
  }
}

test('a judge is answered with the runner verdict, its tests in order; the first failing test skips the rest', async () => {
  const runner = judgeRunner('a', localJudge)
  await withApp([runner], {}, async ({ app }) => {
    const r = await app.inject({ method: 'POST', url: '/v1/judge', payload: { code: SUM, tests: sumTests } })
    assert.equal(r.statusCode, 200)
    const result = r.json() as JudgeResult
    assert.equal(result.verdict, 'wrong_answer')
    assert.deepEqual([result.passed, result.total], [2, 3])
    assert.deepEqual(
      result.tests.map((t) => t.verdict),
      ['accepted', 'accepted', 'wrong_answer']
    )
    assert.equal(result.runner, 'a')
    const sent = runner.judged[0] as JudgeRequest
    assert.equal(sent.timeout_ms, 4000, "the contract's per-test default is sent")
    assert.equal(sent.compile_timeout_ms, 10_000)
    const first = await app.inject({
      method: 'POST',
      url: '/v1/judge',
      payload: { code: SUM, tests: [{ stdin: '1 1\n', expected: '3\n' }, ...sumTests] }
    })
    assert.deepEqual(
      (first.json() as JudgeResult).tests.map((t) => t.verdict),
      ['wrong_answer', 'skipped', 'skipped', 'skipped']
    )
    const io = await app.inject({
      method: 'POST',
      url: '/v1/judge',
      payload: { code: SUM, input_output: { inputs: ['1 2\n', ['3 4']], outputs: ['3\n', ['7']] } }
    })
    assert.equal((io.json() as JudgeResult).verdict, 'accepted', 'the APPS form: strings, or lines')
  })
})

test('bad judges are a 400 naming the field, and nothing is judged', async () => {
  const runner = judgeRunner('a', localJudge)
  await withApp(
    [runner],
    { maxCodeBytes: 100, maxTimeoutMs: 5000, maxMemoryMb: 2048, maxBatchItems: 2 },
    async ({ app }) => {
      const cases: Array<[string, unknown, string]> = [
        ['/v1/judge', { tests: sumTests }, 'code'],
        ['/v1/judge', { code: 'x', language: 'cobol', tests: sumTests }, 'language'],
        ['/v1/judge', { code: 'x' }, 'tests'],
        ['/v1/judge', { code: 'x', tests: [] }, 'tests'],
        ['/v1/judge', { code: 'x', tests: sumTests, input_output: { inputs: [''], outputs: [''] } }, 'input_output'],
        ['/v1/judge', { code: 'x', input_output: { inputs: ['1', '2'], outputs: ['1'] } }, 'input_output/outputs'],
        ['/v1/judge', { code: 'x', language: 'cpp', tests: [{ call: { function: 'f', args: [] } }] }, 'tests/0/call'],
        ['/v1/judge', { code: 'x', tests: sumTests, compare: 'fuzzy' }, 'compare'],
        ['/v1/judge', { code: 'x'.repeat(101), tests: sumTests }, 'code'],
        ['/v1/judge', { code: 'x', tests: sumTests, timeout_ms: 5001 }, 'timeout_ms'],
        ['/v1/judge', { code: 'x', tests: sumTests, compile_timeout_ms: 5001 }, 'compile_timeout_ms'],
        ['/v1/judge', { code: 'x', tests: sumTests, memory_mb: 4096 }, 'memory_mb'],
        [
          '/v1/judge',
          { code: 'x', tests: sumTests, compare: { checker: { language: 'cpp', code: 'y'.repeat(101) } } },
          'compare/checker/code'
        ],
        [
          '/v1/judge',
          { code: 'x', tests: sumTests, compare: { checker: { language: 'javascript', code: 'y' } } },
          'compare/checker/language'
        ],
        ['/v1/judge/batch', { requests: [{ code: 'a', tests: sumTests }, { code: 'b' }] }, 'requests/1/tests'],
        [
          '/v1/judge/batch',
          {
            requests: [
              { code: 'a', tests: sumTests },
              { code: 'b', tests: sumTests, timeout_ms: 9000 }
            ]
          },
          'requests/1/timeout_ms'
        ],
        ['/v1/judge/batch', { requests: [1, 2, 3].map(() => ({ code: 'a', tests: sumTests })) }, 'requests']
      ]
      for (const [url, payload, field] of cases) {
        const r = await app.inject({ method: 'POST', url, payload: payload as object })
        assert.equal(r.statusCode, 400, `${url} ${JSON.stringify(payload).slice(0, 120)}: ${r.body}`)
        assert.equal(r.json().status, 'invalid_request')
        assert.equal(r.json().error.field, field, `${JSON.stringify(payload).slice(0, 120)}: ${r.body}`)
      }
      assert.equal(runner.judged.length, 0, 'nothing was judged')
      const small = await app.inject({ method: 'POST', url: '/v1/judge', payload: { code: SUM, tests: sumTests } })
      assert.equal((small.json() as JudgeResult).verdict, 'wrong_answer')
      assert.equal(runner.judged[0]?.timeout_ms, 4000, 'the default is within a larger maxTimeoutMs')
    }
  )
  await withApp([judgeRunner('b', localJudge)], { maxTimeoutMs: 1000 }, async ({ app }) => {
    const r = await app.inject({ method: 'POST', url: '/v1/judge', payload: { code: SUM, tests: sumTests } })
    assert.equal(r.statusCode, 200, 'a deployment whose limit is under the defaults gets its limit as the defaults')
  })
})

test("the fleet's verdicts are retried on another runner; a verdict on the program, or a refusal, is not", async () => {
  // a fleet verdict whose program surely did not run (maybe_ran false)
  const broken = judgeRunner('broken', async (r) =>
    failedJudgeResult('infra_error', r.language ?? 'python', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'the sandbox died', {
      maybe_ran: false
    })
  )
  const good = judgeRunner('good', localJudge)
  await withApp([broken, good], {}, async ({ app, metrics }) => {
    for (let i = 0; i < 4; i++) {
      const r = await app.inject({
        method: 'POST',
        url: '/v1/judge',
        payload: { code: SUM, tests: sumTests.slice(0, 2) }
      })
      assert.equal((r.json() as JudgeResult).verdict, 'accepted')
      assert.equal((r.json() as JudgeResult).runner, 'good')
    }
    const batch = await app.inject({
      method: 'POST',
      url: '/v1/judge/batch',
      payload: { requests: [0, 1, 2, 3, 4, 5].map((i) => ({ code: SUM, tests: sumTests.slice(0, 1 + (i % 3)) })) }
    })
    const results = (batch.json() as { results: JudgeResult[] }).results
    assert.deepEqual(
      results.map((r) => r.verdict),
      ['accepted', 'accepted', 'wrong_answer', 'accepted', 'accepted', 'wrong_answer']
    )
    assert.ok(results.every((r) => r.runner === 'good'))
    const text = await metrics.registry.metrics()
    assert.match(
      text,
      /sandfleet_gateway_judges_total\{verdict="infra_error",language="python",backend="process"\} [1-9]/
    )
    assert.match(text, /sandfleet_gateway_judges_total\{verdict="wrong_answer",language="python",backend="process"\} 2/)
    assert.match(text, /sandfleet_gateway_judge_tests_total\{verdict="accepted",language="python"\} [1-9]/)
    assert.match(text, /sandfleet_gateway_retries_total\{status="accepted"\} [1-9]/)
  })
  const refusing = judgeRunner('refusing', async (r) =>
    failedJudgeResult(
      'invalid_request',
      r.language ?? 'python',
      'SF_ERR_RUNNER_LANGUAGE',
      'language: cpp is not judged by this runner'
    )
  )
  const other = judgeRunner('other', localJudge)
  await withApp([refusing, other], {}, async ({ app }) => {
    for (let i = 0; i < 6; i++) {
      const r = await app.inject({ method: 'POST', url: '/v1/judge', payload: { code: SUM, tests: sumTests } })
      const result = r.json() as JudgeResult
      assert.equal(r.statusCode, 200)
      assert.equal(result.verdict, result.runner === 'refusing' ? 'invalid_request' : 'wrong_answer')
    }
    assert.equal(refusing.judged.length + other.judged.length, 6, 'each judge went to one runner, once')
  })
  // one that may have run (a stall: maybe_ran true) is answered as it is, never judged a second time
  const stalled = judgeRunner('stalled', async (r) =>
    failedJudgeResult('infra_error', r.language ?? 'python', 'SF_ERR_RUNNER_STALLED', 'stalled', { maybe_ran: true })
  )
  const spare = judgeRunner('spare', localJudge)
  await withApp([stalled, spare], {}, async ({ app }) => {
    for (let i = 0; i < 6; i++) {
      const r = await app.inject({ method: 'POST', url: '/v1/judge', payload: { code: SUM, tests: sumTests } })
      const result = r.json() as JudgeResult
      if (result.runner === 'stalled') assert.deepEqual([result.verdict, result.maybe_ran], ['infra_error', true])
      else assert.equal(result.verdict, 'wrong_answer')
    }
    assert.equal(stalled.judged.length + spare.judged.length, 6, 'each judge went to one runner, once')
    assert.ok(stalled.judged.length > 0)
  })
})

test('a judge batch streams one {index, result} line per judge as NDJSON', async () => {
  await withApp([judgeRunner('a', localJudge)], {}, async ({ app }) => {
    const requests = [
      { code: SUM, tests: sumTests.slice(0, 2) },
      { code: 'print(', tests: sumTests },
      { code: SUM, tests: sumTests, run_all: true }
    ]
    const r = await app.inject({
      method: 'POST',
      url: '/v1/judge/batch',
      headers: { accept: 'application/x-ndjson' },
      payload: { requests }
    })
    assert.equal(r.statusCode, 200)
    assert.match(String(r.headers['content-type']), /application\/x-ndjson/)
    const lines = r.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { index: number; result: JudgeResult })
    assert.deepEqual(lines.map((l) => l.index).sort(), [0, 1, 2])
    const byIndex = new Map(lines.map((l) => [l.index, l.result]))
    assert.equal(byIndex.get(0)?.verdict, 'accepted')
    assert.equal(byIndex.get(1)?.verdict, 'compile_error')
    assert.match(byIndex.get(1)?.compile?.stderr ?? '', /SyntaxError/)
    const all = byIndex.get(2) as JudgeResult
    assert.equal(all.verdict, 'wrong_answer')
    assert.deepEqual([all.passed, all.total], [2, 3])
  })
})

test('/v1/info lists the languages the runners judge, each with its distinct versions', async () => {
  const languages = (gpp: string): RunnerInfo['judge_languages'] => [
    { name: 'python', aliases: ['py'], title: 'Python 3', version: '3.11.2' },
    { name: 'cpp', aliases: ['c++'], title: 'C++17 (g++)', version: gpp, precompiled_header: true }
  ]
  await withApp(
    [judgeRunner('a', localJudge, languages('12.2.0')), judgeRunner('b', localJudge, languages('14.1.0'))],
    {},
    async ({ app }) => {
      const info = (await app.inject({ method: 'GET', url: '/v1/info' })).json()
      assert.deepEqual(info.judge_languages, [
        { name: 'python', aliases: ['py'], title: 'Python 3', versions: ['3.11.2'], runners: 2 },
        { name: 'cpp', aliases: ['c++'], title: 'C++17 (g++)', versions: ['12.2.0', '14.1.0'], runners: 2 }
      ])
    }
  )
})
