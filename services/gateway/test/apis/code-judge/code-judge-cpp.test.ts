/**
 * code-judge's `cpp` on every route, held to the captured C++ samples (fixtures/cpp.json) with a judge that really
 * compiles (the tests' local judge: g++ on this machine): accepted, wrong output (`success` false, `run_success` true),
 * a run past the time limit (`worker_timeout`, `Suicide from timeout.`), a compile error (`run_success` false, the
 * compiler's message in stderr, `cost` 0), an assertion; a batch mixing Python and C++; and a fleet that judges no C++:
 * code-judge's 422 naming `type`, nothing run, never an `internal_error`.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { installCallContext } from '../../../src/pipeline/call-context.ts'
import { QUEUE_TIMEOUT_MS, failedJudgeResult, type JudgeLanguageInfo, type JudgeRequest } from '@sandfleet/protocol'
import { codeJudgeCompat } from '../../../src/apis/code-judge/code-judge.ts'
import { assertCodeJudgeCpp, loadCppSamples, runPython } from '../helpers.ts'
import { localJudge } from '../../helpers/local-judge.ts'

const CPP: JudgeLanguageInfo = { name: 'cpp', aliases: ['c++'], title: 'C++17 (g++)', version: '12.2.0' }
const judged: JudgeRequest[] = []
const judge = async (r: JudgeRequest): ReturnType<typeof localJudge> => {
  judged.push(r)
  return await localJudge(r)
}

/** A code-judge app over the local judge; `languages`: what the fleet says it judges. */
async function codeJudgeApp(languages: JudgeLanguageInfo[] = [CPP], timeoutMs = 2000): Promise<FastifyInstance> {
  const app = Fastify()
  installCallContext(app, QUEUE_TIMEOUT_MS)
  await app.register(codeJudgeCompat, {
    execute: runPython,
    executeBatch: async (reqs) => await Promise.all(reqs.map(runPython)),
    judge,
    judgeBatch: async (reqs) => await Promise.all(reqs.map(judge)),
    judgedLanguages: async () => ({ byName: new Map(languages.map((l) => [l.name, l])) }),
    status: () => ({ queue: 0, num_workers: 2 }),
    // a run past its limit is the captured one's shape sooner (code-judge's 10 s, here 2 s)
    limits: { timeoutMs }
  })
  return app
}

let app: FastifyInstance
before(async () => {
  app = await codeJudgeApp()
})
after(async () => {
  await app.close()
})

for (const sample of await loadCppSamples('code-judge')) {
  test(`code-judge C++ sample ${sample.path} ${JSON.stringify(sample.request).slice(0, 90)} gets the captured shape and values`, async () => {
    const res = await app.inject({ method: 'POST', url: sample.path as string, payload: sample.request as object })
    assert.equal(res.statusCode, sample.http_status)
    assertCodeJudgeCpp(res.json(), sample)
  })
}

test('a batch mixing Python and C++ answers each in order, on every batch route', async () => {
  const submissions = [
    {
      type: 'cpp',
      solution: '#include <cstdio>\nint main(){int a;scanf("%d",&a);printf("%d\\n",a*2);}',
      input: '21',
      expected_output: '42'
    },
    { type: 'python', solution: 'print(int(input())+1)', input: '41', expected_output: '42' },
    { type: 'cpp', solution: 'int main(){ return 3; }' },
    { type: 'cpp', solution: '#include <cstdio>\nint main(){puts("7");}', expected_output: '8' }
  ]
  for (const url of ['/run/batch', '/judge/batch', '/run/long-batch', '/judge/long-batch']) {
    const res = await app.inject({ method: 'POST', url, payload: { type: 'batch', submissions } })
    assert.equal(res.statusCode, 200, url)
    assert.deepEqual(
      res.json().results.map((r: any) => [r.success, r.run_success, r.reason]),
      [
        [true, true, ''],
        [true, true, ''],
        [false, false, ''],
        [false, true, '']
      ],
      url
    )
    if (url.startsWith('/run')) assert.equal(res.json().results[0].stdout, '42\n')
  }
  const sent = judged.find((r) => r.code.includes('return 3')) as JudgeRequest
  assert.deepEqual(
    [sent.language, sent.tests, sent.timeout_ms, sent.memory_mb],
    ['cpp', [{ stdin: '' }], 2000, 384],
    'a submission is a judge of one test, with its stdin and no expected output, at code-judge limits'
  )
})

test('a fleet that judges no C++ answers a cpp submission 422 naming type, on every route, and runs nothing', async () => {
  const none = await codeJudgeApp([])
  try {
    judged.length = 0
    const single = await none.inject({
      method: 'POST',
      url: '/run',
      payload: { type: 'cpp', solution: 'int main(){}' }
    })
    assert.equal(single.statusCode, 422)
    assert.deepEqual(single.json().detail[0].loc, ['body', 'type'])
    assert.equal(single.json().detail[0].type, 'literal_error')
    assert.equal(single.json().detail[0].msg, "Input should be 'python'")
    for (const url of ['/judge/batch', '/run/long-batch']) {
      const res = await none.inject({
        method: 'POST',
        url,
        payload: {
          type: 'batch',
          submissions: [
            { type: 'python', solution: 'print(1)' },
            { type: 'cpp', solution: 'int main(){}' }
          ]
        }
      })
      assert.equal(res.statusCode, 422, url)
      assert.deepEqual(res.json().detail[0].loc, ['body', 'submissions', 1, 'type'])
    }
    assert.equal(judged.length, 0)
    const python = await none.inject({ method: 'POST', url: '/run', payload: { type: 'python', solution: 'print(1)' } })
    assert.equal(python.json().run_success, true, 'Python still runs')
  } finally {
    await none.close()
  }
})

test("a runner's refusal of a compiled submission is invalid_input with the reason in stderr; a fleet fault is retriable", async () => {
  for (const [verdict, code, reason] of [
    ['invalid_request', 'SF_ERR_RUNNER_LIMIT', 'invalid_input'],
    ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'queue_timeout'],
    ['infra_error', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'internal_error']
  ] as const) {
    const one = Fastify()
    installCallContext(one, QUEUE_TIMEOUT_MS)
    try {
      const answer = failedJudgeResult(verdict, 'cpp', code, 'code: 9 bytes, over the limit')
      await one.register(codeJudgeCompat, {
        execute: runPython,
        executeBatch: async () => [],
        judge: async () => answer,
        judgeBatch: async (rs) => rs.map(() => answer),
        status: () => ({ queue: 0, num_workers: 1 })
      })
      const body = (await one.inject({ method: 'POST', url: '/run', payload: { type: 'cpp', solution: 'x' } })).json()
      assert.deepEqual([body.run_success, body.reason], [false, reason])
      if (verdict === 'invalid_request') assert.match(body.stderr, /over the limit/)
    } finally {
      await one.close()
    }
  }
})
