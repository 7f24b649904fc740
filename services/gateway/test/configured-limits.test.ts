/**
 * A deployment's limits hold on every route: a call that gives no timeout gets one within
 * `maxTimeoutMs` (not the contract's 10 s default, which a smaller limit would refuse), and a call
 * over a limit is refused naming the field, on /v1 and through the compatible APIs' own fields.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import type { ExecRequest } from '@sandfleet/protocol'
import { echoRunner } from './helpers/fake-runner.ts'

/** The echo runner, keeping the timeout of every call and cell it is given. */
function recordingRunner (): RunnerClient & { timeouts: Array<number | undefined> } {
  const echo = echoRunner('limits')
  const timeouts: Array<number | undefined> = []
  const sessions = echo.sessions
  return {
    ...echo,
    timeouts,
    execute: async (r: ExecRequest) => { timeouts.push(r.timeout_ms); return await echo.execute(r) },
    executeBatch: async (rs: ExecRequest[], on) => { timeouts.push(...rs.map((r) => r.timeout_ms)); return await echo.executeBatch(rs, on) },
    sessions: sessions === undefined ? undefined : { ...sessions, execute: async (...args: Parameters<typeof sessions.execute>) => { timeouts.push(args[1].timeout_ms); return await sessions.execute(...args) } }
  }
}

test('a deployment\'s maxTimeoutMs and maxCodeBytes: defaults within them, larger values refused naming the field, on /v1 and the compatible APIs', async () => {
  const runner = recordingRunner()
  const config = loadGatewayConfig({ env: {}, values: { maxTimeoutMs: 3000, maxCodeBytes: 100 } })
  const { app } = await buildGatewayApp({ config, clients: [runner], logger: false })
  const post = async (url: string, payload: unknown): Promise<{ status: number, body: any }> => {
    const res = await app.inject({ method: 'POST', url, payload: payload as object })
    return { status: res.statusCode, body: res.json() }
  }
  try {
    await app.ready()
    // no timeout given: the deployment's limit, where the contract's default (10 s) is over it
    assert.equal((await post('/v1/execute', { code: 'x' })).status, 200)
    assert.equal((await post('/v1/execute/batch', { requests: [{ code: 'x' }] })).status, 200)
    assert.equal((await post('/run_code', { code: 'x', language: 'python' })).body.status, 'Success')
    assert.equal((await post('/run_jupyter', { cells: ['x = 1', 'x'] })).body.status, 'Success')
    assert.deepEqual(runner.timeouts, [3000, 3000, 3000, 3000, 3000])

    const v1 = await post('/v1/execute', { code: 'x', timeout_ms: 3001 })
    assert.deepEqual([v1.status, v1.body.error.field], [400, 'timeout_ms'])
    const long = await post('/run_code', { code: 'x', language: 'python', run_timeout: 5 })
    assert.equal(long.status, 422, JSON.stringify(long.body))
    assert.deepEqual(long.body.detail[0].loc, ['body', 'run_timeout'])
    assert.match(long.body.detail[0].msg, /limit of 3000/)
    const big = await post('/run_code', { code: 'x'.repeat(101), language: 'python' })
    assert.equal(big.status, 422, JSON.stringify(big.body))
    assert.deepEqual(big.body.detail[0].loc, ['body', 'code'])
    const cell = await post('/run_jupyter', { cells: ['x'.repeat(101)] })
    assert.equal(cell.body.status, 'SandboxError')
    assert.match(cell.body.message, /code is 101 bytes, over this deployment's limit of 100 bytes \(maxCodeBytes, --max-code-bytes\)/)
    // bytes, not characters: 50 two-byte characters are 100 bytes (within), 51 are 102 (over)
    assert.equal((await post('/run_code', { code: 'é'.repeat(50), language: 'python' })).body.status, 'Success')
    const wide = await post('/run_jupyter', { cells: ['é'.repeat(51)] })
    assert.match(wide.body.message, /code is 102 bytes, over this deployment's limit of 100 bytes/)
    assert.equal(runner.timeouts.length, 6, 'no refused call reached the runner')
  } finally { await app.close() }
})
