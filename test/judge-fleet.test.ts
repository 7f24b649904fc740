/**
 * Judging on a real fleet (a runner and a gateway over HTTP), on the process backend (bubblewrap, the host's g++ and
 * gcc) and the docker backend (the sandbox image's: `SANDFLEET_TEST_JUDGE_IMAGE`, default sandfleet/python:1, with this
 * checkout's executor bound over the image's): every C and C++ shape of the captured samples (fixtures/cpp.json:
 * code-judge's cpp on its routes, SandboxFusion's /run_code), Piston's c++ and c, /v1/judge's verdicts and its
 * streamed batch, MCP's judge tool, and /v1/info's judged languages with the compilers' versions.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { JudgeResult } from '@sandfleet/protocol'
import type { RunnerConfigInput } from '@sandfleet/runner'
import { assertCodeJudgeCpp, assertSandboxFusionCpp, loadCppSamples } from '../services/gateway/test/apis/helpers.ts'
import { post, startFleet, type TestFleet } from './helpers/fleet.ts'

const IMAGE = process.env.SANDFLEET_TEST_JUDGE_IMAGE ?? 'sandfleet/python:1'
/** This checkout's executor, bound over the image's (the image may come from another branch). */
const EXECUTOR = fileURLToPath(new URL('../sandbox-images/python/executor.py', import.meta.url))

function dockerUp(): boolean {
  try {
    execFileSync('docker', ['image', 'inspect', IMAGE], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const codeJudgeSamples = await loadCppSamples('code-judge')
const fusionSamples = await loadCppSamples('sandboxfusion')

const SUM_CPP = '#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}\n'
const SUM_TESTS = [
  { stdin: '1 2\n', expected: '3\n' },
  { stdin: '20 22\n', expected: '42' },
  { stdin: '5 5\n', expected: '11\n' }
]

/** The judges of one backend's fleet. */
async function judgeOn(fleet: TestFleet): Promise<void> {
  // a fresh sandbox's first compile reads the precompiled header from a cold disk (seconds of wall time on a loaded
  // machine, little CPU): each sandbox of the pool compiles once before the samples' 10 s limits meet it
  await Promise.all(
    [0, 1].map(
      async (i) =>
        await post(`${fleet.url}/v1/judge`, {
          language: 'cpp',
          code: `${SUM_CPP}// warm-up ${i}\n`,
          tests: [{ stdin: '1 1' }],
          compile_timeout_ms: 120_000
        })
    )
  )
  // the captured samples, each through its own API
  for (const sample of codeJudgeSamples) {
    const res = await post(`${fleet.url}${String(sample.path)}`, sample.request)
    assert.equal(res.status, sample.http_status, `${String(sample.path)} ${JSON.stringify(res.body)}`)
    assertCodeJudgeCpp(res.body, sample)
  }
  for (const sample of fusionSamples) {
    const request = sample.request as { code: string; compile_timeout?: number }
    // a binary the runner's compile cache holds is not compiled again: the compile_timeout sample's program must be new
    const fresh =
      (request.compile_timeout ?? 10) < 1
        ? { ...request, code: `${request.code}// ${String(Math.random())}\n` }
        : request
    const res = await post(`${fleet.url}/run_code`, fresh)
    assert.equal(res.status, sample.http_status, JSON.stringify(res.body))
    assertSandboxFusionCpp(res.body, sample)
  }
  // code-judge's long batch, C++ beside Python
  const long = await post(`${fleet.url}/judge/long-batch`, {
    type: 'batch',
    submissions: [
      { type: 'cpp', solution: SUM_CPP, input: '1 2', expected_output: '3' },
      { type: 'python', solution: 'print(sum(map(int, input().split())))', input: '1 2', expected_output: '3' },
      { type: 'cpp', solution: SUM_CPP, input: '1 2', expected_output: '4' }
    ]
  })
  assert.deepEqual(
    long.body.results.map((r: any) => [r.success, r.run_success]),
    [
      [true, true],
      [true, true],
      [false, true]
    ]
  )

  // the native judge: each verdict of a compiled program
  const verdicts: Array<[string, Record<string, unknown>, string, string[]]> = [
    [
      'accepted',
      { language: 'cpp', code: SUM_CPP, tests: SUM_TESTS.slice(0, 2) },
      'accepted',
      ['accepted', 'accepted']
    ],
    [
      'wrong',
      { language: 'c++', code: SUM_CPP, tests: SUM_TESTS },
      'wrong_answer',
      ['accepted', 'accepted', 'wrong_answer']
    ],
    [
      'first',
      { language: 'cpp', code: SUM_CPP, tests: [...SUM_TESTS].reverse() },
      'wrong_answer',
      ['wrong_answer', 'skipped', 'skipped']
    ],
    [
      'compile',
      { language: 'c', code: 'int main( {', tests: SUM_TESTS },
      'compile_error',
      ['skipped', 'skipped', 'skipped']
    ],
    [
      'slow',
      { language: 'c', code: 'int main(void){for(;;);}', tests: [{ stdin: '' }], timeout_ms: 500 },
      'time_limit',
      ['time_limit']
    ],
    [
      'abort',
      { language: 'cpp', code: '#include <cassert>\nint main(){assert(0);}', tests: [{ stdin: '' }] },
      'runtime_error',
      ['runtime_error']
    ],
    [
      'exit',
      {
        language: 'cpp',
        code: '#include <cstdio>\nint main(){puts("3");return 1;}',
        tests: [{ stdin: '', expected: '3\n' }]
      },
      'runtime_error',
      ['runtime_error']
    ]
  ]
  for (const [name, request, verdict, tests] of verdicts) {
    const res = await post(`${fleet.url}/v1/judge`, request)
    assert.equal(res.status, 200, name)
    const result = res.body as JudgeResult
    assert.equal(result.verdict, verdict, `${name}: ${JSON.stringify(result).slice(0, 600)}`)
    if (verdict !== 'compile_error')
      assert.deepEqual(
        result.tests.map((t) => t.verdict),
        tests,
        name
      )
  }
  const again = (await post(`${fleet.url}/v1/judge`, verdicts[0]?.[1])).body as JudgeResult
  assert.equal(again.compile?.cached, true, 'the same source compiled again comes from the cache')

  // a streamed batch of judges
  const streamed = await fetch(`${fleet.url}/v1/judge/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify({
      requests: [
        { language: 'cpp', code: SUM_CPP, tests: SUM_TESTS },
        { code: 'a, b = map(int, input().split())\nprint(a + b)', tests: SUM_TESTS.slice(0, 2) },
        {
          language: 'c',
          code: '#include <stdio.h>\nint main(void){long a,b;scanf("%ld %ld",&a,&b);printf("%ld\\n",a+b);}',
          tests: SUM_TESTS,
          run_all: true
        }
      ]
    })
  })
  const lines = (await streamed.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { index: number; result: JudgeResult })
  const byIndex = new Map(lines.map((l) => [l.index, l.result]))
  assert.deepEqual(
    [0, 1, 2].map((i) => [byIndex.get(i)?.verdict, byIndex.get(i)?.passed]),
    [
      ['wrong_answer', 2],
      ['accepted', 2],
      ['wrong_answer', 2]
    ]
  )

  // Piston's c++ and c
  const piston = await post(`${fleet.url}/api/v2/execute`, {
    language: 'cpp',
    version: '*',
    files: [{ content: SUM_CPP }],
    stdin: '40 2'
  })
  assert.deepEqual(
    [piston.body.language, piston.body.compile.code, piston.body.run.stdout, piston.body.run.code],
    ['c++', 0, '42\n', 0]
  )
  const broken = await post(`${fleet.url}/api/v2/execute`, {
    language: 'c',
    version: '*',
    files: [{ content: 'int main( {' }]
  })
  assert.deepEqual([broken.body.compile.status, broken.body.run], ['RE', broken.body.compile])
  const runtimes = (await (await fetch(`${fleet.url}/api/v2/runtimes`)).json()) as Array<Record<string, string>>
  assert.ok(runtimes.some((r) => r.language === 'c++'))
  // what Piston's clients expect: a bare semver-like version (javascript's is the one the fleet does not report)
  for (const r of runtimes.filter((r) => r.language !== 'javascript'))
    assert.match(r.version, /^\d+(\.\d+)+$/, JSON.stringify(runtimes))

  // MCP's judge tool
  const client = new Client({ name: 'judge-fleet-test', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${fleet.url}/mcp`)))
  try {
    const tool = await client.callTool({
      name: 'judge',
      arguments: { language: 'cpp', code: SUM_CPP, tests: SUM_TESTS }
    })
    assert.deepEqual(
      [(tool.structuredContent as any).verdict, (tool.structuredContent as any).passed, tool.isError],
      ['wrong_answer', 2, false]
    )
  } finally {
    await client.close()
  }

  // what the fleet judges, with the versions its sandboxes report
  const info = (await (await fetch(`${fleet.url}/v1/info`)).json()) as {
    judge_languages: Array<{ name: string; versions: string[] }>
  }
  const cpp = info.judge_languages.find((l) => l.name === 'cpp')
  assert.match(cpp?.versions[0] ?? '', /^\d+\.\d+/, JSON.stringify(info.judge_languages))
  for (const l of info.judge_languages)
    for (const v of l.versions) assert.match(v, /^\d+(\.\d+)+$/, `${l.name}: a bare version number`)
  assert.ok(info.judge_languages.some((l) => l.name === 'c'))
}

/** A fleet of one runner of `runner`'s backend; code-judge's time limit shortened, so its timeout sample takes 3 s. */
async function onBackend(runner: RunnerConfigInput): Promise<void> {
  const fleet = await startFleet(['judge-fleet'], { maxSessions: 0, ...runner }, { codeJudgeTimeoutMs: 3000 })
  try {
    await judgeOn(fleet)
  } finally {
    await fleet.close()
  }
}

test('C and C++ are judged on the process backend: every captured shape, each API', { timeout: 600_000 }, async () => {
  await onBackend({ backend: 'process' })
})

test(
  'C and C++ are judged on the docker backend (the sandbox image): every captured shape, each API',
  { timeout: 900_000, skip: dockerUp() ? false : `no docker engine or no image ${IMAGE}` },
  async () => {
    await onBackend({ backend: 'docker', dockerImage: IMAGE, executorPath: EXECUTOR, sandboxMemoryMb: 2048 })
  }
)
