import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import { failedResult, type ExecRequest, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'
import { fakeInfo, notJudging } from './helpers/fake-runner.ts'

function fakeClient(name: string, answer: (r: ExecRequest) => ExecResult): RunnerClient & { calls: number } {
  const load: RunnerLoad = {
    runner: name,
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 2,
    in_flight: 0,
    queued: 0,
    queue_limit: 10,
    warm: 2,
    busy: 0,
    sessions: 0
  }
  const c = {
    name,
    calls: 0,
    async execute(r: ExecRequest) {
      c.calls++
      return answer(r)
    },
    async executeBatch(rs: ExecRequest[], on?: (i: number, r: ExecResult) => void) {
      const out = rs.map((r) => {
        c.calls++
        return answer(r)
      })
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
  return c
}
const ok =
  (name: string) =>
  (r: ExecRequest): ExecResult => ({
    ...failedResult('ok', 'x', ''),
    error: null,
    exit_code: 0,
    stdout: r.code,
    runner: name,
    sandbox: 's1'
  })

test('bad input is answered 400 with the error body naming the field', async () => {
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [fakeClient('a', ok('a'))],
    logger: false
  })
  try {
    await app.ready()
    const cases: Array<[string, unknown, string | undefined]> = [
      ['/v1/execute', { code: 1 }, 'code'],
      ['/v1/execute', {}, 'code'],
      ['/v1/execute', { code: 'x', language: 'cobol' }, 'language'],
      ['/v1/execute', { code: 'x', timeout_ms: 1e9 }, 'timeout_ms'],
      ['/v1/execute', { code: 'x', memory_mb: 1 }, 'memory_mb'],
      ['/v1/execute/batch', { requests: [{ code: 'a' }, { code: 'b', memory_mb: 1 }] }, 'requests/1/memory_mb']
    ]
    for (const [url, payload, field] of cases) {
      const r = await app.inject({ method: 'POST', url, payload: payload as object })
      assert.equal(r.statusCode, 400, url + JSON.stringify(payload))
      assert.equal(r.json().status, 'invalid_request')
      assert.equal(r.json().error.field, field)
    }
    const bad = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      payload: '{bad',
      headers: { 'content-type': 'application/json' }
    })
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json().error.code, 'SF_ERR_GATEWAY_INVALID_JSON')
  } finally {
    await app.close()
  }
})

test('a wrong method on a known path is a 405 whose Allow lists the methods it takes; an unknown path a 404', async () => {
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [fakeClient('a', ok('a'))],
    logger: false
  })
  try {
    await app.ready()
    const get = await app.inject({ method: 'GET', url: '/v1/execute' })
    assert.equal(get.statusCode, 405)
    assert.equal(get.headers.allow, 'POST')
    assert.deepEqual(get.json(), {
      status: 'invalid_request',
      error: { code: 'SF_ERR_GATEWAY_METHOD_NOT_ALLOWED', message: '/v1/execute does not take GET; it takes POST' }
    })
    // a path with a parameter, and the query left out of the match
    const put = await app.inject({ method: 'PUT', url: '/v1/sessions/abc?x=1' })
    assert.equal(put.statusCode, 405)
    assert.equal(put.headers.allow, 'DELETE, GET, HEAD')
    assert.equal((await app.inject({ method: 'POST', url: '/healthz' })).headers.allow, 'GET, HEAD')
    const missing = await app.inject({ method: 'GET', url: '/v1/nope' })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.headers.allow, undefined)
    assert.equal(missing.json().error.code, 'SF_ERR_GATEWAY_NOT_FOUND')
  } finally {
    await app.close()
  }
})

test('an infra_error that surely did not run is retried on another runner, a user error is not', async () => {
  const broken = fakeClient('broken', (r) =>
    failedResult('infra_error', 'SF_ERR_X', 'boom', { runner: 'broken', request_id: r.request_id, maybe_ran: false })
  )
  const good = fakeClient('good', ok('good'))
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {} }),
    clients: [broken, good],
    logger: false
  })
  try {
    await app.ready()
    for (let i = 0; i < 4; i++) {
      const r = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'print(1)' } })
      assert.equal(r.json().status, 'ok')
      assert.equal(r.json().runner, 'good')
    }
    const nd = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      headers: { accept: 'application/x-ndjson' },
      payload: { requests: [{ code: 'a' }, { code: 'b' }, { code: 'c' }] }
    })
    const lines = nd.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.deepEqual(lines.map((l) => l.index).sort(), [0, 1, 2])
    assert.ok(lines.every((l) => l.result.status === 'ok'))
  } finally {
    await app.close()
  }
  const userErr = fakeClient('u', (r) => ({ ...ok('u')(r), status: 'error', exit_code: 1 }))
  const other = fakeClient('o', (r) => ({ ...ok('o')(r), status: 'error', exit_code: 1 }))
  const g2 = await buildGatewayApp({ config: loadGatewayConfig({ env: {} }), clients: [userErr, other], logger: false })
  try {
    await g2.app.ready()
    const r = await g2.app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'raise' } })
    assert.equal(r.json().status, 'error')
    assert.equal(userErr.calls + other.calls, 1)
  } finally {
    await g2.app.close()
  }
})
