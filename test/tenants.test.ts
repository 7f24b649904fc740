/**
 * Tenants on a real gateway in front of a real runner (process backend): API keys from a keys
 * file and the environment, each with its own in-flight and rate quota. A tenant past its quota
 * is answered 429 with Retry-After, on every route that runs code, while another tenant is
 * served; the rate quota refills; the tenant names are the metric labels, and the only ones.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { post, startFleet, type TestFleet } from './helpers/fleet.ts'
import { find, one, parseExposition } from './helpers/prometheus.ts'

const KEYS = {
  env: 'sk-env-key-0000000001',
  a: 'sk-tenant-a-6f1c0c2f8e9a',
  b: 'sk-tenant-b-0b5d3e8a1c7f',
  c: 'sk-tenant-c-9d8c7b6a5f4e'
}
const as = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

let dir: string
let fleet: TestFleet
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-tenants-'))
  const file = join(dir, 'api-keys')
  writeFileSync(
    file,
    `# tenants of this test\n${KEYS.a}  a  maxInFlight=2\n${KEYS.b}  b\n${KEYS.c}\tc\tratePerSecond=2\n`,
    { mode: 0o600 }
  )
  fleet = await startFleet(['tenants-a'], { poolSize: 3 }, { apiKeys: [KEYS.env], apiKeysFile: file })
})
after(async () => {
  await fleet?.close()
  rmSync(dir, { recursive: true, force: true })
})

test('tenants: past its in-flight quota a key gets 429 + Retry-After on every route that runs code, while another key is served', async () => {
  const holding = [1, 2].map(
    async () =>
      await post(`${fleet.url}/v1/execute`, { code: 'import time; time.sleep(1.5); print("held")' }, as(KEYS.a))
  )
  await sleep(300)
  const started = Date.now()
  const refused = await fetch(`${fleet.url}/v1/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...as(KEYS.a) },
    body: JSON.stringify({ code: 'print(1)' })
  })
  assert.equal(refused.status, 429)
  assert.equal(refused.headers.get('retry-after'), '1')
  const body = (await refused.json()) as { status: string; error: { code: string; message: string } }
  assert.deepEqual([body.status, body.error.code], ['overloaded', 'SF_ERR_GATEWAY_TENANT_IN_FLIGHT'])
  assert.match(body.error.message, /API key a holds 2 calls; it may hold 2/)
  assert.ok(Date.now() - started < 1000, 'refused at once, not queued behind its calls')
  // batches, sessions and the compatible APIs count toward the same quota (the compatible APIs
  // answer in FastAPI's shape, {detail}, as they answer every refusal)
  const native = await Promise.all([
    post(`${fleet.url}/v1/execute/batch`, { requests: [{ code: 'print(1)' }] }, as(KEYS.a)),
    post(`${fleet.url}/v1/sessions`, {}, as(KEYS.a))
  ])
  assert.deepEqual(
    native.map((r) => [r.status, r.body.error?.code]),
    Array(2).fill([429, 'SF_ERR_GATEWAY_TENANT_IN_FLIGHT'])
  )
  const compat = await Promise.all([
    post(`${fleet.url}/run_code`, { code: 'print(1)', language: 'python' }, as(KEYS.a)),
    post(`${fleet.url}/run`, { type: 'python', solution: 'print(1)', expected_output: '1' }, as(KEYS.a))
  ])
  for (const r of compat) {
    assert.equal(r.status, 429)
    assert.match(r.body.detail, /^API key a holds 2 calls/)
  }
  const b = await post(`${fleet.url}/v1/execute`, { code: 'print("b served")' }, as(KEYS.b))
  assert.deepEqual([b.status, b.body.status, b.body.stdout], [200, 'ok', 'b served\n'])
  const env = await post(`${fleet.url}/v1/execute`, { code: 'print("env key served")' }, as(KEYS.env))
  assert.deepEqual([env.status, env.body.stdout], [200, 'env key served\n'])
  for (const held of await Promise.all(holding)) assert.deepEqual([held.status, held.body.stdout], [200, 'held\n'])
  const again = await post(`${fleet.url}/v1/execute`, { code: 'print("a again")' }, as(KEYS.a))
  assert.deepEqual([again.status, again.body.stdout], [200, 'a again\n'], 'its calls ended: the quota is free again')
})

test('tenants: past its rate quota a key gets 429 + Retry-After; the bucket refills with time', async () => {
  const call = async (): Promise<Response> =>
    await fetch(`${fleet.url}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as(KEYS.c) },
      body: JSON.stringify({ code: 'print(3)' })
    })
  await sleep(1000) // a full bucket: 2 calls
  assert.deepEqual([(await call()).status, (await call()).status], [200, 200])
  const refused = await call()
  assert.equal(refused.status, 429)
  assert.equal(refused.headers.get('retry-after'), '1')
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'SF_ERR_GATEWAY_TENANT_RATE')
  const b = await post(
    `${fleet.url}/v1/execute/batch`,
    { requests: [{ code: 'print(1)' }, { code: 'print(2)' }, { code: 'print(3)' }] },
    as(KEYS.b)
  )
  assert.equal(b.status, 200, 'another key has no rate quota')
  await sleep(600) // one call refilled (2 a second)
  assert.equal((await call()).status, 200)
})

test('tenants: a wrong key is 401; the metrics are labelled by the configured tenant names only', async () => {
  for (const headers of [{}, as('sk-tenant-a-6f1c0c2f8e9b'), as(KEYS.a.slice(0, -1)), { 'x-api-key': `${KEYS.b}x` }]) {
    const r = await post(`${fleet.url}/v1/execute`, { code: 'print(1)' }, headers)
    assert.deepEqual([r.status, r.body.error.code], [401, 'SF_ERR_GATEWAY_UNAUTHORIZED'])
  }
  assert.equal((await post(`${fleet.url}/v1/nowhere`, { code: 'print(1)' }, as(KEYS.b))).status, 404)
  const samples = parseExposition(await (await fetch(`${fleet.url}/metrics`)).text())
  const tenants = new Set(find(samples, 'sandfleet_gateway_tenant_rejected_total').map((s) => s.labels.tenant))
  assert.deepEqual([...tenants].sort(), ['a', 'b', 'c', 'key-1'])
  assert.equal(one(samples, 'sandfleet_gateway_tenant_rejected_total', { tenant: 'a', reason: 'in_flight' }).value, 5)
  assert.equal(one(samples, 'sandfleet_gateway_tenant_rejected_total', { tenant: 'c', reason: 'rate' }).value, 1)
  assert.equal(one(samples, 'sandfleet_gateway_tenant_rejected_total', { tenant: 'b', reason: 'rate' }).value, 0)
  assert.equal(
    one(samples, 'sandfleet_gateway_tenant_calls_total', { tenant: 'b' }).value,
    4,
    'a batch counts its items; a POST no route takes counts nothing'
  )
  assert.equal(one(samples, 'sandfleet_gateway_tenant_in_flight', { tenant: 'a' }).value, 0)
})

/** A logger recording every line and every child's bindings. */
function recorder(lines: Array<Record<string, unknown>>, bindings: Record<string, unknown> = {}): FastifyBaseLogger {
  const at = (level: string) => (obj: unknown, msg?: string) => {
    lines.push(
      typeof obj === 'string' ? { ...bindings, level, msg: obj } : { ...bindings, ...(obj as object), level, msg }
    )
  }
  return {
    level: 'info',
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    debug: at('debug'),
    trace: at('trace'),
    silent: () => {},
    child: (b: Record<string, unknown>) => {
      lines.push({ child: b })
      return recorder(lines, { ...bindings, ...b })
    }
  } as unknown as FastifyBaseLogger
}

test("tenants: the gateway says at start who may call it, and names the tenant on its request's log lines", async () => {
  const lines: Array<Record<string, unknown>> = []
  const base = (): Record<string, unknown> => ({
    host: '127.0.0.1',
    port: 0,
    runners: ['http://127.0.0.1:9'],
    loadPollMs: 60_000
  })
  const open = await startGateway({ config: loadGatewayConfig({ env: {}, values: base() }), logger: recorder(lines) })
  await open.close()
  assert.ok(
    lines.some((l) => l.msg === 'no API keys: serving without authentication on the loopback address 127.0.0.1 only'),
    JSON.stringify(lines)
  )
  lines.length = 0
  const keyed = await startGateway({
    config: loadGatewayConfig({ env: {}, values: { ...base(), apiKeys: [KEYS.a, KEYS.b] } }),
    logger: recorder(lines)
  })
  try {
    const start = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('API keys: 2 tenant(s)'))
    assert.deepEqual(start?.tenants, ['key-1', 'key-2'])
    const res = await keyed.app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: as(KEYS.b),
      payload: { code: 'print(1)' }
    })
    assert.notEqual(res.statusCode, 401)
    assert.ok(
      lines.some((l) => (l.child as { tenant?: string } | undefined)?.tenant === 'key-2'),
      "the request's logger names its tenant"
    )
  } finally {
    await keyed.close()
  }
  assert.ok(!JSON.stringify(lines).includes(KEYS.a), 'a key is never logged')
})
