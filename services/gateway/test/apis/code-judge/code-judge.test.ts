import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { QUEUE_TIMEOUT_MS, failedResult, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import { installCallContext } from '../../../src/pipeline/call-context.ts'
import { codeJudgeCompat, mapPool, patiently } from '../../../src/apis/code-judge/code-judge.ts'
import { assertSameShape, fleetFault, loadSamples, runPython } from '../helpers.ts'
import { localJudge } from '../../helpers/local-judge.ts'

/** The judge of the compiled submissions: the tests' local judge (g++ on this machine). */
const judging = {
  judge: localJudge,
  judgeBatch: async (requests: Parameters<typeof localJudge>[0][]) => await Promise.all(requests.map(localJudge))
}

let app: FastifyInstance
before(async () => {
  app = Fastify()
  installCallContext(app, QUEUE_TIMEOUT_MS)
  await app.register(codeJudgeCompat, {
    execute: runPython,
    executeBatch: async (reqs) => await Promise.all(reqs.map(runPython)),
    ...judging,
    status: () => ({ queue: 0, num_workers: 2 })
  })
})
after(async () => {
  await app.close()
})

for (const sample of await loadSamples('code-judge')) {
  const method = sample.method ?? 'POST'
  test(`code-judge sample ${method} ${sample.path} ${JSON.stringify(sample.request ?? '').slice(0, 60)} gets the captured shape and values`, async () => {
    const res = await app.inject({
      method: method as 'GET' | 'POST',
      url: sample.path as string,
      ...(sample.request !== undefined ? { payload: sample.request as object } : {})
    })
    assert.equal(res.statusCode, sample.http_status)
    const body = res.json()
    assertSameShape(body, sample.response)
    const want = sample.response
    if (sample.http_status !== 200) {
      assert.deepEqual(
        body.detail.map((d: any) => [d.type, d.loc]),
        want.detail.map((d: any) => [d.type, d.loc])
      )
      return
    }
    const pairs: Array<[any, any]> = Array.isArray(want.results)
      ? want.results.map((w: any, i: number) => [body.results[i], w])
      : [[body, want]]
    if (typeof want !== 'object') assert.deepEqual(body, want)
    else if (sample.path === '/status') assert.equal(typeof body.queue, 'number')
    else {
      for (const [got, w] of pairs) {
        assert.equal(got.success, w.success)
        assert.equal(got.run_success, w.run_success)
        assert.equal(got.reason, w.reason)
        if ('stdout' in w && w.stdout.length < 1000) assert.equal(got.stdout, w.stdout)
        // sandfleet says where it cut an output (the samples' README: code-judge cuts silently)
        const stderr = String(got.stderr).replace(/\n\[sandfleet: [^\]]*\]\n$/, '')
        if ('stderr' in w) assert.equal(stderr.trim().split('\n').pop() ?? '', w.stderr.trim().split('\n').pop() ?? '')
      }
    }
  })
}

test('stdout is cut at 1,000 characters by default, as code-judge cuts it, and the cut is said in stderr', async () => {
  const body = (
    await app.inject({ method: 'POST', url: '/run', payload: { type: 'python', solution: "print('é'*1500)" } })
  ).json()
  assert.equal(body.stdout, 'é'.repeat(1000))
  assert.match(body.stderr, /stdout truncated/)
  const batch = (
    await app.inject({
      method: 'POST',
      url: '/run/long-batch',
      payload: { type: 'batch', submissions: [{ type: 'python', solution: "print('x'*1500)" }] }
    })
  ).json()
  assert.equal(batch.results[0].stdout.length, 1000)
})

test("the compat limits default to code-judge's (384 MiB, 10 s) and a deployment sets its own", async () => {
  const seen: ExecRequest[] = []
  const record = async (r: ExecRequest): Promise<ExecResult> => {
    seen.push(r)
    return await runPython(r)
  }
  for (const [limits, memory, timeout, chars] of [
    [undefined, 384, 10_000, 1000],
    [{ memoryMb: 2048, timeoutMs: 60_000, stdoutChars: 5 }, 2048, 60_000, 5]
  ] as const) {
    const one = Fastify()
    try {
      installCallContext(one, QUEUE_TIMEOUT_MS)
      await one.register(codeJudgeCompat, {
        execute: record,
        executeBatch: async (reqs) => await Promise.all(reqs.map(record)),
        ...judging,
        status: () => ({ queue: 0, num_workers: 1 }),
        ...(limits !== undefined ? { limits } : {})
      })
      seen.length = 0
      const one1 = (
        await one.inject({ method: 'POST', url: '/run', payload: { type: 'python', solution: "print('y'*1200)" } })
      ).json()
      await one.inject({
        method: 'POST',
        url: '/judge/batch',
        payload: { type: 'batch', submissions: [{ type: 'python', solution: 'print(1)' }] }
      })
      assert.deepEqual(
        seen.map((r) => [r.memory_mb, r.timeout_ms]),
        [
          [memory, timeout],
          [memory, timeout]
        ]
      )
      assert.equal(one1.stdout.length, chars)
    } finally {
      await one.close()
    }
  }
})

test('sub_ids the caller gives are echoed; missing ones are made up', async () => {
  const body = (
    await app.inject({
      method: 'POST',
      url: '/judge/batch',
      payload: {
        type: 'batch',
        sub_id: 'B',
        submissions: [
          { type: 'python', solution: 'print(1)', expected_output: '1', sub_id: 'A1' },
          { type: 'python', solution: 'print(2)', expected_output: '1' }
        ]
      }
    })
  ).json()
  assert.equal(body.sub_id, 'B')
  assert.equal(body.results[0].sub_id, 'A1')
  assert.equal(typeof body.results[1].sub_id, 'string')
  assert.deepEqual(
    body.results.map((r: any) => r.success),
    [true, false]
  )
  assert.equal('stdout' in body.results[0], false)
})

test('/judge/long-batch answers the judge shape for every item', async () => {
  const body = (
    await app.inject({
      method: 'POST',
      url: '/judge/long-batch',
      payload: {
        type: 'batch',
        submissions: [{ type: 'python', solution: 'print(input())', input: '7', expected_output: '7' }]
      }
    })
  ).json()
  assert.deepEqual(Object.keys(body.results[0]).sort(), ['cost', 'reason', 'run_success', 'sub_id', 'success'])
  assert.equal(body.results[0].success, true)
})

test('bad input answers 422 naming the field, inside a batch too', async () => {
  const cases: Array<[string, unknown, Array<string | number>, string]> = [
    ['/run', { type: 'cobol', solution: 'x' }, ['body', 'type'], 'literal_error'],
    ['/run', { type: 'python', solution: 'x', input: 3 }, ['body', 'input'], 'string_type'],
    ['/run/batch', { type: 'batch' }, ['body', 'submissions'], 'missing'],
    ['/run/batch', { type: 'python', submissions: [] }, ['body', 'type'], 'literal_error'],
    [
      '/judge/batch',
      { type: 'batch', submissions: [{ type: 'python', solution: 'x' }, { type: 'python' }] },
      ['body', 'submissions', 1, 'solution'],
      'missing'
    ]
  ]
  for (const [url, payload, loc, type] of cases) {
    const res = await app.inject({ method: 'POST', url, payload: payload as object })
    assert.equal(res.statusCode, 422, `${url} ${JSON.stringify(payload)}`)
    assert.deepEqual(res.json().detail[0].loc, loc)
    assert.equal(res.json().detail[0].type, type)
  }
})

const reasons = [
  ['timeout', 'worker_timeout'],
  ['overloaded', 'queue_timeout'],
  ['queue_timeout', 'queue_timeout'],
  ['infra_error', 'internal_error'],
  ['invalid_request', 'invalid_input'],
  ['error', ''],
  ['memory', ''],
  ['killed', '']
] as const
for (const [status, reason] of reasons) {
  test(`sandfleet ${status} is code-judge reason "${reason}" with run_success false`, async () => {
    const one = Fastify()
    try {
      const result: ExecResult = {
        ...failedResult(status, 'SF_ERR_X', 'why'),
        exit_code: status === 'error' ? 1 : null
      }
      installCallContext(one, QUEUE_TIMEOUT_MS)
      await one.register(codeJudgeCompat, {
        execute: async () => result,
        executeBatch: async (r) => r.map(() => result),
        ...judging,
        status: () => ({ queue: 0, num_workers: 1 })
      })
      for (const url of ['/run', '/judge']) {
        const body = (
          await one.inject({ method: 'POST', url, payload: { type: 'python', solution: 'x', expected_output: '' } })
        ).json()
        assert.deepEqual([body.run_success, body.success, body.reason], [false, false, reason], url)
      }
      const batch = (
        await one.inject({
          method: 'POST',
          url: '/run/batch',
          payload: { type: 'batch', submissions: [{ type: 'python', solution: 'x' }] }
        })
      ).json()
      assert.equal(batch.results[0].reason, reason)
    } finally {
      await one.close()
    }
  })
}

test("the stdout of a run that timed out ends with the line code-judge's wrapper prints, cut with the rest", async () => {
  for (const [stdoutChars, expected] of [
    [undefined, 'before\nSuicide from timeout.\n'],
    [10, 'before\nSui']
  ] as const) {
    const one = Fastify()
    try {
      const result: ExecResult = {
        ...failedResult('timeout', 'Timeout', 'the run exceeded timeout_ms=1000'),
        stdout: 'before\n'
      }
      installCallContext(one, QUEUE_TIMEOUT_MS)
      await one.register(codeJudgeCompat, {
        execute: async () => result,
        executeBatch: async (r) => r.map(() => result),
        ...judging,
        status: () => ({ queue: 0, num_workers: 1 }),
        ...(stdoutChars === undefined ? {} : { limits: { stdoutChars } })
      })
      const run = (await one.inject({ method: 'POST', url: '/run', payload: { type: 'python', solution: 'x' } })).json()
      assert.deepEqual([run.stdout, run.reason], [expected, 'worker_timeout'])
      const batch = (
        await one.inject({
          method: 'POST',
          url: '/run/batch',
          payload: { type: 'batch', submissions: [{ type: 'python', solution: 'x' }] }
        })
      ).json()
      assert.equal(batch.results[0].stdout, expected)
      const judge = (
        await one.inject({
          method: 'POST',
          url: '/judge',
          payload: { type: 'python', solution: 'x', expected_output: 'before' }
        })
      ).json()
      assert.deepEqual([judge.stdout, judge.success], [undefined, false])
    } finally {
      await one.close()
    }
  }
  const ok = Fastify()
  try {
    installCallContext(ok, QUEUE_TIMEOUT_MS)
    await ok.register(codeJudgeCompat, {
      execute: runPython,
      executeBatch: async () => [],
      ...judging,
      status: () => ({ queue: 0, num_workers: 1 })
    })
    const run = (
      await ok.inject({ method: 'POST', url: '/run', payload: { type: 'python', solution: 'print("fine")' } })
    ).json()
    assert.equal(run.stdout, 'fine\n', 'only a timeout gets the line')
  } finally {
    await ok.close()
  }
})

test('a batch whose execution path throws answers internal_error for each item, not a 500', async () => {
  const one = Fastify()
  try {
    installCallContext(one, QUEUE_TIMEOUT_MS)
    await one.register(codeJudgeCompat, {
      execute: fleetFault('infra_error'),
      executeBatch: async () => {
        throw new Error('runner gone')
      },
      ...judging,
      status: () => ({ queue: 0, num_workers: 1 })
    })
    const res = await one.inject({
      method: 'POST',
      url: '/run/batch',
      payload: {
        type: 'batch',
        submissions: [
          { type: 'python', solution: 'x' },
          { type: 'python', solution: 'y' }
        ]
      }
    })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(
      res.json().results.map((r: any) => r.reason),
      ['internal_error', 'internal_error']
    )
  } finally {
    await one.close()
  }
})

test('GET /status reports the fleet and GET /ping answers "pong" as JSON', async () => {
  const one = Fastify()
  try {
    installCallContext(one, QUEUE_TIMEOUT_MS)
    await one.register(codeJudgeCompat, {
      execute: runPython,
      executeBatch: async () => [],
      ...judging,
      status: async () => ({ queue: 5, num_workers: 64 })
    })
    assert.deepEqual((await one.inject({ method: 'GET', url: '/status' })).json(), { queue: 5, num_workers: 64 })
    const ping = await one.inject({ method: 'GET', url: '/ping' })
    assert.equal(ping.body, '"pong"')
    assert.match(String(ping.headers['content-type']), /application\/json/)
  } finally {
    await one.close()
  }
})

test('a long batch waits out a busy fleet instead of failing its items', async () => {
  let calls = 0
  const busyThenOk = async (_r: ExecRequest): Promise<ExecResult> =>
    ++calls <= 3
      ? failedResult('overloaded', 'SF_ERR_BUSY', 'busy')
      : { ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout: '1\n' }
  const result = await patiently(() => busyThenOk({ code: '' }), Date.now() + 60_000)
  assert.equal(result.status, 'ok')
  assert.equal(calls, 4)
  const gaveUp = await patiently(async () => failedResult('queue_timeout', 'SF_ERR_BUSY', 'busy'), Date.now())
  assert.equal(gaveUp.status, 'queue_timeout')
})

test('mapPool keeps input order and never runs more than its limit at once', async () => {
  let running = 0
  let peak = 0
  const out = await mapPool([5, 1, 4, 2, 3], 2, async (n) => {
    running++
    peak = Math.max(peak, running)
    await new Promise((resolve) => setImmediate(resolve))
    running--
    return n * 10
  })
  assert.deepEqual(out, [50, 10, 40, 20, 30])
  assert.equal(peak, 2)
})
