import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance } from 'fastify'
import { buildRunnerApp } from '../src/app.ts'
import { Runner } from '../src/runner/runner.ts'
import { runnerConfig } from '../src/config.ts'
import { ScriptedDriver } from './helpers/scripted-driver.ts'

let runner: Runner
let app: FastifyInstance

before(async () => {
  runner = new Runner(
    runnerConfig({ id: 'r-app', poolSize: 2, maxTimeoutMs: 5000, maxBodyBytes: 4096, languages: ['python'] }),
    { driver: new ScriptedDriver() }
  )
  await runner.start()
  app = buildRunnerApp(runner)
  await app.ready()
})
after(async () => {
  await app.close()
  await runner.close()
})

test('app: POST /v1/execute answers an ExecResult', async () => {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'echo hello' } })
  assert.equal(res.statusCode, 200)
  const body = res.json()
  assert.equal(body.status, 'ok')
  assert.equal(body.stdout, 'hello\n')
  assert.equal(body.runner, 'r-app')
})

test('app: bad input is a 400 ErrorBody naming the field, nothing runs', async () => {
  const cases: Array<[unknown, string, string | undefined]> = [
    [{}, 'SF_ERR_RUNNER_INVALID_REQUEST', 'code'],
    [{ code: 1 }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'code'],
    [{ code: 'x', timeout_ms: '100' }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'timeout_ms'],
    [{ code: 'x', language: 'cobol' }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'language'],
    [{ code: 'x', extra: 1 }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'extra'],
    [{ code: 'x', timeout_ms: 6000 }, 'SF_ERR_RUNNER_LIMIT', 'timeout_ms'],
    // what the sandbox would decode: a file's content that is not base64, a path that names no writable place
    [{ code: 'x', files: { 'a.txt': 'hello world!' } }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'files/a.txt'],
    [{ code: 'x', files: { '../../etc/x': 'eA==' } }, 'SF_ERR_RUNNER_INVALID_REQUEST', 'files/../../etc/x']
  ]
  for (const [payload, code, field] of cases) {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', payload: payload as object })
    assert.equal(res.statusCode, 400, JSON.stringify(payload).slice(0, 60))
    const body = res.json()
    assert.equal(body.status, 'invalid_request')
    assert.equal(body.error.code, code)
    assert.equal(body.error.field, field)
  }
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/execute',
    headers: { 'content-type': 'application/json' },
    payload: '{"code":'
  })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().error.code, 'SF_ERR_RUNNER_BAD_JSON')
})

test('app: a body over maxBodyBytes is a 413 that gives the limit and the setting', async () => {
  const res = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'x'.repeat(5000) } })
  assert.equal(res.statusCode, 413)
  assert.deepEqual(res.json(), {
    status: 'invalid_request',
    error: {
      code: 'SF_ERR_RUNNER_BODY_TOO_LARGE',
      message: "request body is larger than 4096 bytes, this runner's maxBodyBytes (--max-body-bytes)"
    }
  })
})

test('app: a wrong method on a known path is a 405 whose Allow lists the methods it takes; an unknown path a 404', async () => {
  const get = await app.inject({ method: 'GET', url: '/v1/execute' })
  assert.equal(get.statusCode, 405)
  assert.equal(get.headers.allow, 'POST')
  assert.deepEqual(get.json().error, {
    code: 'SF_ERR_RUNNER_METHOD_NOT_ALLOWED',
    message: '/v1/execute does not take GET; it takes POST'
  })
  assert.equal((await app.inject({ method: 'POST', url: '/v1/runner/load' })).headers.allow, 'GET, HEAD')
  const missing = await app.inject({ method: 'GET', url: '/v1/nope' })
  assert.deepEqual(
    [missing.statusCode, missing.headers.allow, missing.json().error.code],
    [404, undefined, 'SF_ERR_RUNNER_NOT_FOUND']
  )
})

test('app: a body nested past LIMITS.maxJsonDepth is a 400 SF_ERR_RUNNER_BAD_JSON on every route', async () => {
  const deep = '['.repeat(1000) + ']'.repeat(1000) // under the test app's 4 KiB body limit
  for (const url of ['/v1/execute', '/v1/execute/batch', '/v1/sessions']) {
    for (const payload of [`{"code": ${deep}}`, `{"requests": [{"code": "x", "files": ${deep}}]}`]) {
      const res = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload })
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.json().error.code, 'SF_ERR_RUNNER_BAD_JSON')
      assert.match(res.json().error.message, /nested deeper than 64 levels/)
    }
  }
})

test('app: batch answers in order; an item over a limit names requests/i/field', async () => {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/execute/batch',
    payload: { requests: [{ code: 'sleep 5' }, { code: 'echo b' }] }
  })
  assert.equal(res.statusCode, 200)
  assert.deepEqual(
    res.json().results.map((r: { stdout: string }) => r.stdout),
    ['slept 5\n', 'b\n']
  )
  const bad = await app.inject({
    method: 'POST',
    url: '/v1/execute/batch',
    payload: { requests: [{ code: 'echo a' }, { code: 'echo b', timeout_ms: 9000 }] }
  })
  assert.equal(bad.statusCode, 400)
  assert.equal(bad.json().error.field, 'requests/1/timeout_ms')
})

test('app: batch with Accept: application/x-ndjson streams {index, result} lines', async () => {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/execute/batch',
    headers: { accept: 'application/x-ndjson' },
    payload: { requests: [{ code: 'sleep 20' }, { code: 'echo fast' }] }
  })
  assert.equal(res.statusCode, 200)
  assert.match(String(res.headers['content-type']), /application\/x-ndjson/)
  const lines = res.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { index: number; result: { stdout: string } })
  assert.deepEqual(
    lines.map((l) => l.index),
    [1, 0],
    'the fast item streams first'
  )
  assert.equal(lines[1].result.stdout, 'slept 20\n')
})

test('app: load, healthz, readyz, metrics', async () => {
  const load = (await app.inject({ url: '/v1/runner/load' })).json()
  assert.equal(load.runner, 'r-app')
  assert.equal(load.capacity, 2)
  assert.equal(load.state, 'ready')
  // how late past timeout_ms it answers, which a gateway checks its callGraceMs covers
  assert.deepEqual([load.grace_ms, load.stop_ms], [2000, 0], 'its graceMs; the scripted driver stops at once')
  assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200)
  assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200)
  const metrics = await app.inject({ url: '/metrics' })
  assert.match(metrics.body, /sandfleet_runner_executions_total/)
  const missing = await app.inject({ url: '/nope' })
  assert.equal(missing.statusCode, 404)
  assert.equal(missing.json().error.code, 'SF_ERR_RUNNER_NOT_FOUND')
})

test('app: GET /v1/info names the backend, its isolation per language and the manifest (none for this driver)', async () => {
  const res = await app.inject({ method: 'GET', url: '/v1/info' })
  assert.equal(res.statusCode, 200)
  const info = res.json()
  assert.equal(info.runner, 'r-app')
  assert.equal(info.state, 'ready')
  assert.deepEqual(info.languages, ['python'])
  assert.equal(info.pool_size, 2)
  assert.equal(info.backend, runner.isolation().driver)
  assert.deepEqual(info.isolation.python, runner.isolation())
  assert.match(info.backend_reason, /given by the embedder/)
  assert.equal(info.manifest, null)
})

test("app: x-sandfleet-queue-timeout-ms is the caller's budget for the wait: an item that cannot start in it is answered queue_timeout, the others run", async () => {
  const headers = { 'x-sandfleet-queue-timeout-ms': '100' }
  const res = await app.inject({
    method: 'POST',
    url: '/v1/execute/batch',
    headers,
    payload: { requests: [{ code: 'sleep 600' }, { code: 'sleep 600' }, { code: 'echo tail' }] }
  })
  assert.equal(res.statusCode, 200)
  const results = res.json().results as Array<{ status: string; error: { type: string } | null; queue_ms: number }>
  assert.deepEqual(
    results.map((r) => r.status),
    ['ok', 'ok', 'queue_timeout']
  )
  assert.equal(results[2].error?.type, 'SF_ERR_RUNNER_QUEUE_TIMEOUT')
  assert.ok(
    results[2].queue_ms < 600,
    `queue_ms ${results[2].queue_ms}: answered at the budget, not when a sandbox freed`
  )
  for (const url of ['/v1/execute', '/v1/execute/batch']) {
    const bad = await app.inject({
      method: 'POST',
      url,
      headers: { 'x-sandfleet-queue-timeout-ms': 'soon' },
      payload: url === '/v1/execute' ? { code: 'echo x' } : { requests: [{ code: 'echo x' }] }
    })
    assert.equal(bad.statusCode, 400, url)
    assert.deepEqual(
      [bad.json().error.code, bad.json().error.field],
      ['SF_ERR_RUNNER_INVALID_REQUEST', 'x-sandfleet-queue-timeout-ms']
    )
  }
})
