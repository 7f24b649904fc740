import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import { failedResult, type ExecRequest, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'
import { fakeInfo, notJudging } from './helpers/fake-runner.ts'

/**
 * A runner answering `error` for code `raise`, `queue_timeout` (it never ran) for `late`, else `ok`, taking 2 ms and
 * waiting 3.
 */
function runner(name: string, backend: string): RunnerClient {
  const load: RunnerLoad = {
    runner: name,
    state: 'ready',
    backend,
    languages: ['python', 'javascript'],
    capacity: 8,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: 8,
    busy: 0,
    sessions: 0,
    pools: {
      python: { capacity: 4, queued: 0, backend },
      javascript: { capacity: 4, queued: 0, backend: 'javascript' }
    }
  }
  const answer = (r: ExecRequest): ExecResult =>
    r.code === 'late'
      ? failedResult('queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'late', { runner: name, queue_ms: 3 })
      : {
          ...failedResult(r.code === 'raise' ? 'error' : 'ok', 'x', ''),
          error: null,
          exit_code: r.code === 'raise' ? 1 : 0,
          duration_ms: 2,
          queue_ms: 3,
          runner: name,
          sandbox: 's1'
        }
  return {
    name,
    async execute(r) {
      return answer(r)
    },
    async executeBatch(rs, on) {
      const out = rs.map(answer)
      out.forEach((r, i) => on?.(i, r))
      return out
    },
    ...notJudging(name),
    async load() {
      return load
    },
    async info() {
      return fakeInfo(load)
    },
    async close() {}
  }
}

/** The samples of metric `name` whose labels include every `key="value"` of `labels` (comma-separated). */
const samples = (text: string, name: string, labels = ''): string[] =>
  text.split('\n').filter((l) => l.startsWith(`${name}{`) && labels.split(',').every((kv) => l.includes(kv)))

/** The value of the one series of `name` with `labels`: a missing series fails the test, never reads as 0. */
const series = (text: string, name: string, labels: string): number => {
  const found = samples(text, name, labels)
  assert.equal(found.length, 1, `one ${name}{${labels}} expected in the exposition, found ${found.length}`)
  return Number(found[0].slice(found[0].lastIndexOf(' ') + 1))
}

test('gateway metrics count every item of a batch once, by status, language and the backend of the pool that ran it, and the run and queue times of every runner answer', async () => {
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [runner('r1', 'process')],
    logger: false
  })
  try {
    await app.ready()
    const requests = [
      { code: 'a' },
      { code: 'b' },
      { code: 'raise' },
      { code: 'late' },
      { code: 'c', language: 'javascript' }
    ]
    for (const accept of ['application/json', 'application/x-ndjson']) {
      const r = await app.inject({
        method: 'POST',
        url: '/v1/execute/batch',
        headers: { accept },
        payload: { requests }
      })
      assert.equal(r.statusCode, 200)
    }
    await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'd' } })
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    const executions = (status: string, language: string): number =>
      series(
        text,
        'sandfleet_gateway_executions_total',
        `status="${status}",language="${language}",backend="${language === 'javascript' ? 'javascript' : 'process'}"`
      )
    assert.deepEqual(
      [
        executions('ok', 'python'),
        executions('error', 'python'),
        executions('queue_timeout', 'python'),
        executions('ok', 'javascript')
      ],
      [5, 2, 2, 2]
    )
    assert.deepEqual(
      samples(text, 'sandfleet_gateway_executions_total', 'language="javascript",backend="process"'),
      [],
      "JavaScript calls are never counted under the Python pool's backend"
    )
    assert.equal(series(text, 'sandfleet_gateway_run_duration_seconds_count', 'language="python"'), 9)
    assert.equal(series(text, 'sandfleet_gateway_run_duration_seconds_bucket', 'le="0.0025",language="python"'), 9)
    assert.equal(
      series(text, 'sandfleet_gateway_run_duration_seconds_bucket', 'le="0.001",language="python"'),
      2,
      'the queue_timeouts, which ran 0 ms'
    )
    assert.equal(series(text, 'sandfleet_gateway_queue_wait_seconds_sum', 'language="javascript"'), 0.006)
    // No attempt was retried: the counter is declared and has no series yet.
    assert.match(text, /^# TYPE sandfleet_gateway_retries_total counter$/m)
    assert.deepEqual(samples(text, 'sandfleet_gateway_retries_total'), [])
  } finally {
    await app.close()
  }
})

test('gateway metrics count a retried attempt by the status it ended with', async () => {
  let calls = 0
  /** Runners of which the fleet's first answer is a retriable infra_error, every later one `ok`. */
  const flaky = (name: string): RunnerClient => {
    const base = runner(name, 'process')
    const answer = (r: ExecRequest): ExecResult =>
      ++calls === 1
        ? failedResult('infra_error', 'SF_ERR_RUNNER_NO_SANDBOX', 'no sandbox could start', {
            runner: name,
            maybe_ran: false
          })
        : {
            ...failedResult('ok', 'x', ''),
            error: null,
            exit_code: 0,
            duration_ms: 2,
            queue_ms: 3,
            runner: name,
            sandbox: 's1',
            stdout: r.code
          }
    return {
      ...base,
      async execute(r) {
        return answer(r)
      }
    }
  }
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [flaky('r1'), flaky('r2')],
    logger: false
  })
  try {
    await app.ready()
    const r = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'again' } })
    assert.deepEqual([r.json().status, r.json().stdout, calls], ['ok', 'again', 2])
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    assert.equal(series(text, 'sandfleet_gateway_retries_total', 'status="ok"'), 1)
    assert.equal(series(text, 'sandfleet_gateway_executions_total', 'status="infra_error",language="python"'), 1)
  } finally {
    await app.close()
  }
})
