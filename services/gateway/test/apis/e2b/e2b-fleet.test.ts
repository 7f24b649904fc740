/**
 * The E2B API on a real gateway in front of a real runner over HTTP (process backend), spoken to as E2B's SDK speaks
 * (raw requests here, to see the wire: e2b-sdk.test.ts runs the SDK itself): the headers tell the API URL from the
 * sandbox URL, the sandbox URL's token and its owner's quota, the Connect codec's envelopes and errors, E2B's error
 * shapes for bad input.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadGatewayConfig, startGateway, type RunningGateway } from '@sandfleet/gateway'
import { listenRunner, runnerConfig, silentLogger, type RunnerServer } from '@sandfleet/runner'

const KEY = 'e2b-fleet-key-1'
const SLOW = 'e2b-fleet-slow-key'
let runner: RunnerServer | undefined
let gateway: RunningGateway | undefined
let dir = ''
let url = ''

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sf-e2b-keys-'))
  await writeFile(join(dir, 'keys'), `${KEY} fast\n${SLOW} slow ratePerSecond=0.001\n`)
  runner = await listenRunner(
    runnerConfig({ backend: 'process', poolSize: 1, host: '127.0.0.1', port: 0, id: 'e2b-http' }),
    { logger: silentLogger }
  )
  gateway = await startGateway({
    config: loadGatewayConfig({
      values: { host: '127.0.0.1', port: 0, runners: [runner.url], loadPollMs: 50, apiKeysFile: join(dir, 'keys') }
    }),
    logger: false
  })
  url = gateway.url
})
after(async () => {
  await gateway?.close()
  await runner?.close()
  await rm(dir, { recursive: true, force: true })
})

async function api(method: string, path: string, body?: unknown, key = KEY): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text) }
}

interface Box {
  id: string
  token: string
}

async function create(key = KEY): Promise<Box> {
  const made = await api('POST', '/v2/sandboxes', { templateID: 'base', timeout: 120 }, key)
  assert.equal(made.status, 201, JSON.stringify(made.body))
  return { id: made.body.sandboxID, token: made.body.envdAccessToken }
}

function inBox(box: Box, port: string, token: string | null = box.token): Record<string, string> {
  return {
    'e2b-sandbox-id': box.id,
    'e2b-sandbox-port': port,
    ...(token === null ? {} : { 'x-access-token': token })
  }
}

test('bad input to the API URL is a 400 in E2B shape naming the field; a sandbox of no runner is a 404', async () => {
  for (const [body, field] of [
    [{ templateID: 'my-own' }, /^templateID: template 'my-own' is not one sandfleet makes/],
    [{ templateID: 'base', timeout: -5 }, /^timeout: /],
    [{ templateID: 'base', allow_internet_access: true }, /^allow_internet_access: sandboxes have no network/],
    [{ templateID: 'base', autoPause: true }, /^autoPause: /],
    [{ templateID: 'base', metadata: { n: 1 } }, /^metadata: /]
  ] as const) {
    const res = await api('POST', '/v2/sandboxes', body)
    assert.equal(res.status, 400)
    assert.equal(res.body.code, 400)
    assert.match(res.body.message, field)
  }
  const bad = await fetch(`${url}/v2/sandboxes`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: '{"templateID":'
  })
  assert.equal(bad.status, 400)
  assert.equal(((await bad.json()) as { code: number }).code, 400)
  const gone = await api('GET', '/sandboxes/bm8tcnVubmVy.0123456789abcdef')
  assert.deepEqual([gone.status, gone.body.code], [404, 404])
  const noKey = await fetch(`${url}/v2/sandboxes`)
  assert.deepEqual([noKey.status, ((await noKey.json()) as { code: number }).code], [401, 401])
})

test("the interpreter: E2B's lines, a FastAPI 422 for bad input, and its owner's quota on the sandbox URL", async () => {
  const box = await create()
  const run = async (body: unknown): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${url}/execute`, {
      method: 'POST',
      headers: { ...inBox(box, '49999'), 'content-type': 'application/json' },
      body: JSON.stringify(body)
    })
    return { status: res.status, text: await res.text() }
  }
  const ok = await run({ code: 'print("out")\n"s"' })
  assert.equal(ok.status, 200)
  assert.deepEqual(
    ok.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string })
      .map((l) => l.type),
    ['number_of_executions', 'stdout', 'result', 'end_of_execution']
  )
  assert.match(ok.text, /"text":"s","is_main_result":true/)
  const bad = await run({ code: 5 })
  assert.equal(bad.status, 422)
  assert.equal((JSON.parse(bad.text) as { detail: Array<{ loc: string[] }> }).detail[0]?.loc.join('.'), 'body.code')
  assert.equal((await run({ code: '1', context_id: 'c', language: 'python' })).status, 400)
  assert.equal((await run({ code: '1', language: 'cobol' })).status, 400)
  assert.equal((await run({ code: '1', context_id: 'nope' })).status, 404)
  await api('DELETE', `/sandboxes/${box.id}`)

  // a sandbox of the slow key: its sandbox URL's calls take that key's quota (one call a long while)
  const slow = await create(SLOW)
  const refused = await fetch(`${url}/execute`, {
    method: 'POST',
    headers: { ...inBox(slow, '49999'), 'content-type': 'application/json' },
    body: JSON.stringify({ code: '1' })
  })
  assert.equal(refused.status, 429)
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  assert.equal((await api('DELETE', `/sandboxes/${slow.id}`, undefined, SLOW)).status, 204)
})

test("a sandbox's life on the API URL: made, listed for its key only, its info, timeout and connect, killed", async () => {
  const box = await create()
  assert.match(box.token, /^[0-9a-f]{48}$/)
  const listed = await api('GET', '/v2/sandboxes')
  assert.deepEqual(
    listed.body.map((s: { sandboxID: string }) => s.sandboxID),
    [box.id]
  )
  assert.deepEqual((await api('GET', '/v2/sandboxes', undefined, SLOW)).body, [], "another key's list")
  assert.equal((await api('GET', `/sandboxes/${box.id}`, undefined, SLOW)).status, 404, "another key's sandbox")
  const info = await api('GET', `/sandboxes/${box.id}`)
  assert.equal(info.body.envdAccessToken, box.token)
  assert.equal((await api('POST', `/sandboxes/${box.id}/timeout`, { timeout: 600 })).status, 204)
  const later = Date.parse((await api('GET', `/sandboxes/${box.id}`)).body.endAt)
  assert.ok(later > Date.now() + 500_000, 'its end moved')
  const met = await api('POST', `/v2/sandboxes/${box.id}/connect`, { timeout: 10 })
  assert.equal(met.body.envdAccessToken, box.token)
  assert.equal(Date.parse((await api('GET', `/sandboxes/${box.id}`)).body.endAt), later, 'connect never shortens')
  assert.equal((await api('DELETE', `/sandboxes/${box.id}`)).status, 204)
  assert.equal((await api('DELETE', `/sandboxes/${box.id}`)).status, 404)
  assert.deepEqual((await api('GET', '/v2/sandboxes')).body, [])
})
