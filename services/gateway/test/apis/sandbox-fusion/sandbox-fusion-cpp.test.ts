/**
 * SandboxFusion's `/run_code` with `cpp`, held to the captured samples (fixtures/cpp.json) with a judge that really
 * compiles (the tests' local judge: g++ on this machine): `compile_result` and `run_result` with their own statuses,
 * `run_result` null after a compile error or a `compile_timeout`, `TimeLimitExceeded`, an assertion's return code (-6)
 * and stderr, `c` refused as SandboxFusion refuses it; and a fleet that judges no C++: the 422 naming `language`.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { installCallContext } from '../../../src/pipeline/call-context.ts'
import { QUEUE_TIMEOUT_MS, failedJudgeResult, type JudgeLanguageInfo, type JudgeRequest } from '@sandfleet/protocol'
import { sandboxFusionCompat } from '../../../src/apis/sandbox-fusion/sandbox-fusion.ts'
import { assertSandboxFusionCpp, loadCppSamples, runPython } from '../helpers.ts'
import { localJudge } from '../../helpers/local-judge.ts'

const CPP: JudgeLanguageInfo = { name: 'cpp', aliases: ['c++'], title: 'C++17 (g++)', version: '12.2.0' }
const judged: JudgeRequest[] = []

async function fusionApp(languages: JudgeLanguageInfo[] = [CPP]): Promise<FastifyInstance> {
  const app = Fastify()
  installCallContext(app, QUEUE_TIMEOUT_MS)
  await app.register(sandboxFusionCompat, {
    execute: runPython,
    judge: async (r) => {
      judged.push(r)
      return await localJudge(r)
    },
    judgedLanguages: async () => ({ byName: new Map(languages.map((l) => [l.name, l])) })
  })
  return app
}

let app: FastifyInstance
before(async () => {
  app = await fusionApp()
})
after(async () => {
  await app.close()
})

for (const sample of await loadCppSamples('sandboxfusion')) {
  const request = sample.request as Record<string, unknown>
  test(`SandboxFusion C++ sample ${String(request.language)} ${JSON.stringify(request).slice(0, 100)} gets the captured shape and values`, async () => {
    const res = await app.inject({ method: 'POST', url: '/run_code', payload: request })
    assert.equal(res.statusCode, sample.http_status, res.body)
    assertSandboxFusionCpp(res.json(), sample)
  })
}

test("a cpp program's limits come from run_timeout, compile_timeout and memory_limit_MB; stdin reaches it", async () => {
  judged.length = 0
  const res = await app.inject({
    method: 'POST',
    url: '/run_code',
    payload: {
      language: 'cpp',
      code: '#include <iostream>\nint main(){std::string s; std::cin >> s; std::cout << s << s;}',
      stdin: 'ab',
      run_timeout: 2.5,
      compile_timeout: 20,
      memory_limit_MB: 256,
      files: {},
      fetch_files: []
    }
  })
  assert.equal(res.json().run_result.stdout, 'abab')
  assert.deepEqual(
    [judged[0]?.timeout_ms, judged[0]?.compile_timeout_ms, judged[0]?.memory_mb, judged[0]?.tests],
    [2500, 20_000, 256, [{ stdin: 'ab' }]]
  )
  const files = await app.inject({
    method: 'POST',
    url: '/run_code',
    payload: { language: 'cpp', code: 'int main(){}', files: { 'a.txt': 'eA==' } }
  })
  assert.equal(files.statusCode, 422)
  assert.deepEqual(files.json().detail[0].loc, ['body', 'files'])
})

test('a fleet that judges no C++ answers cpp 422 naming language, listing what it takes, and runs nothing', async () => {
  const none = await fusionApp([])
  try {
    judged.length = 0
    const res = await none.inject({
      method: 'POST',
      url: '/run_code',
      payload: { language: 'cpp', code: 'int main(){}' }
    })
    assert.equal(res.statusCode, 422)
    assert.deepEqual(res.json().detail[0].loc, ['body', 'language'])
    assert.equal(res.json().detail[0].msg, "Input should be 'python' or 'nodejs'")
    assert.equal(judged.length, 0)
  } finally {
    await none.close()
  }
})

test("the fleet's verdicts are SandboxError; a runner's refusal is a 422 naming the field it came from", async () => {
  for (const [verdict, code, message, status, field] of [
    ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'waited too long', 200, undefined],
    ['infra_error', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'the sandbox died', 200, undefined],
    ['invalid_request', 'SF_ERR_RUNNER_LANGUAGE', 'language: cpp is not judged here', 422, 'language'],
    ['invalid_request', 'SF_ERR_RUNNER_LIMIT', 'compile_timeout_ms: 20000 is over 10000', 422, 'compile_timeout'],
    ['invalid_request', 'SF_ERR_RUNNER_LIMIT', 'timeout_ms: 20000 is over 10000', 422, 'run_timeout']
  ] as const) {
    const one = Fastify()
    installCallContext(one, QUEUE_TIMEOUT_MS)
    try {
      await one.register(sandboxFusionCompat, {
        execute: runPython,
        judge: async () => failedJudgeResult(verdict, 'cpp', code, message)
      })
      const res = await one.inject({ method: 'POST', url: '/run_code', payload: { language: 'cpp', code: 'x' } })
      assert.equal(res.statusCode, status, message)
      if (status === 200) assert.deepEqual([res.json().status, res.json().run_result], ['SandboxError', null])
      else assert.deepEqual(res.json().detail[0].loc, ['body', field])
    } finally {
      await one.close()
    }
  }
})
