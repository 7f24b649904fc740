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
import { gzipSync } from 'node:zlib'
import { join } from 'node:path'
import { loadGatewayConfig, startGateway, type RunningGateway } from '@sandfleet/gateway'
import { listenRunner, runnerConfig, silentLogger, type RunnerServer } from '@sandfleet/runner'
import { envelope, unenvelope } from '../services/gateway/src/apis/e2b/connect-rpc.ts'

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

test('the headers tell the sandbox URL: its routes take only requests with E2b-Sandbox-Port, and such a request reaches no other route', async () => {
  const box = await create()
  // without the port header, /execute is no route of the gateway
  const plain = await fetch(`${url}/execute`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ code: '1' })
  })
  assert.equal(plain.status, 404)
  // with it, the gateway's own routes are out of reach (and a sandbox token is no API key)
  const native = await fetch(`${url}/v1/execute`, {
    method: 'POST',
    headers: { ...inBox(box, '49983'), 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'print(1)' })
  })
  assert.equal(native.status, 404)
  const tokenOnly = await fetch(`${url}/v1/execute`, {
    method: 'POST',
    headers: { ...inBox(box, '49983'), 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'print(1)' })
  })
  assert.equal(tokenOnly.status, 401, 'a route of its own takes the API key, never a token')
  const health = await fetch(`${url}/health`, { headers: inBox(box, '49983') })
  assert.equal(health.status, 204)
  assert.equal((await fetch(`${url}/health`, { headers: inBox(box, '49983', null) })).status, 401)
  assert.equal((await fetch(`${url}/health`, { headers: inBox(box, '49983', 'wrong') })).status, 401)
  const unknown = await fetch(`${url}/health`, {
    headers: { 'e2b-sandbox-id': 'bm8tcnVubmVy.0123456789abcdef', 'e2b-sandbox-port': '49983', 'x-access-token': 't' }
  })
  assert.equal(unknown.status, 502, 'a sandbox not there answers as E2B answers one gone')
  assert.equal(((await unknown.json()) as { sandboxId: string }).sandboxId, 'bm8tcnVubmVy.0123456789abcdef')
  assert.equal((await api('DELETE', `/sandboxes/${box.id}`)).status, 204)
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
  const slow = await run({ code: 'import time\ntime.sleep(0.8)\nprint("late")' })
  assert.equal(slow.status, 200, 'a run past half a second: its head first, its lines at its end')
  assert.match(slow.text, /"type":"stdout","text":"late\\n"/)
  assert.match(slow.text, /"type":"end_of_execution"/)
  const bad = await run({ code: 5 })
  assert.equal(bad.status, 422)
  assert.equal((JSON.parse(bad.text) as { detail: Array<{ loc: string[] }> }).detail[0]?.loc.join('.'), 'body.code')
  assert.equal((await run({ code: '1', context_id: 'c', language: 'python' })).status, 400)
  assert.equal((await run({ code: '1', language: 'cobol' })).status, 400)
  assert.equal((await run({ code: '1', context_id: 'nope' })).status, 404)
  await api('DELETE', `/sandboxes/${box.id}`)

  // a sandbox of the slow key: its sandbox URL's calls take that key's quota (one call a long while)
  const slowKey = await create(SLOW)
  const refused = await fetch(`${url}/execute`, {
    method: 'POST',
    headers: { ...inBox(slowKey, '49999'), 'content-type': 'application/json' },
    body: JSON.stringify({ code: '1' })
  })
  assert.equal(refused.status, 429)
  assert.ok(Number(refused.headers.get('retry-after')) >= 1)
  assert.equal((await api('DELETE', `/sandboxes/${slowKey.id}`, undefined, SLOW)).status, 204)
})

test("envd's files: a multipart upload and an octet-stream one (gzip too), read back; refusals in envd's shape", async () => {
  const box = await create()
  const form = new FormData()
  form.append('file', new Blob([Buffer.from([0, 1, 2, 255])]), '/home/user/up/a.bin')
  const up = await fetch(`${url}/files?username=user`, { method: 'POST', headers: inBox(box, '49983'), body: form })
  assert.equal(up.status, 200)
  assert.deepEqual(await up.json(), [{ name: 'a.bin', type: 'file', path: '/home/user/up/a.bin' }])
  const read = await fetch(`${url}/files?path=${encodeURIComponent('up/a.bin')}`, { headers: inBox(box, '49983') })
  assert.equal(read.headers.get('content-type'), 'application/octet-stream')
  assert.deepEqual([...Buffer.from(await read.arrayBuffer())], [0, 1, 2, 255])
  const zipped = await fetch(`${url}/files?path=/tmp/z.txt`, {
    method: 'POST',
    headers: { ...inBox(box, '49983'), 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' },
    body: gzipSync('unzipped')
  })
  assert.equal(zipped.status, 200)
  assert.equal(await (await fetch(`${url}/files?path=/tmp/z.txt`, { headers: inBox(box, '49983') })).text(), 'unzipped')
  const missing = await fetch(`${url}/files?path=nothing`, { headers: inBox(box, '49983') })
  assert.equal(missing.status, 404)
  assert.equal(((await missing.json()) as { code: number }).code, 404)
  const outside = await fetch(`${url}/files?path=/etc/x`, {
    method: 'POST',
    headers: { ...inBox(box, '49983'), 'content-type': 'application/octet-stream' },
    body: 'x'
  })
  assert.equal(outside.status, 403)
  await api('DELETE', `/sandboxes/${box.id}`)
})

test('envd over Connect: unary answers and errors, a process started as a stream of enveloped events', async () => {
  const box = await create()
  const rpc = async (method: string, message: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${url}/${method}`, {
      method: 'POST',
      headers: { ...inBox(box, '49983'), 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify(message)
    })
    return { status: res.status, body: await res.json() }
  }
  const made = await rpc('filesystem.Filesystem/MakeDir', { path: '/home/user/d' })
  assert.equal(made.status, 200)
  assert.equal(made.body.entry.type, 'FILE_TYPE_DIRECTORY')
  assert.deepEqual(await rpc('filesystem.Filesystem/MakeDir', { path: '/home/user/d' }), {
    status: 409,
    body: { code: 'already_exists', message: '/home/user/d already exists' }
  })
  const missing = await rpc('filesystem.Filesystem/Stat', { path: '/home/user/none' })
  assert.deepEqual([missing.status, missing.body.code], [404, 'not_found'])
  assert.equal((await rpc('filesystem.Filesystem/CreateWatcher', { path: '/home/user' })).body.code, 'unimplemented')
  assert.equal(
    (await rpc('process.Process/SendSignal', { process: { pid: 99999 }, signal: 'SIGNAL_SIGKILL' })).body.code,
    'not_found'
  )

  const start = async (message: unknown): Promise<unknown[]> => {
    const res = await fetch(`${url}/process.Process/Start`, {
      method: 'POST',
      headers: { ...inBox(box, '49983'), 'content-type': 'application/connect+json', 'connect-protocol-version': '1' },
      body: envelope(message)
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/connect+json')
    const bytes = Buffer.from(await res.arrayBuffer())
    const out: unknown[] = []
    for (let at = 0; at < bytes.length;) {
      const length = bytes.readUInt32BE(at + 1)
      out.push({ flags: bytes[at], message: unenvelope(bytes.subarray(at, at + 5 + length)) })
      at += 5 + length
    }
    return out
  }
  const events = await start({ process: { cmd: '/bin/bash', args: ['-l', '-c', 'echo hi; exit 4'] }, stdin: false })
  assert.deepEqual(events.slice(1), [
    { flags: 0, message: { event: { data: { stdout: Buffer.from('hi\n').toString('base64') } } } },
    { flags: 0, message: { event: { end: { exitCode: 4, exited: true, status: 'exit status 4' } } } },
    { flags: 2, message: {} }
  ])
  assert.ok((events[0] as { message: { event: { start: { pid: number } } } }).message.event.start.pid > 0)
  const noCwd = await start({ process: { cmd: '/bin/true', args: [], cwd: '/home/user/not-there' } })
  assert.deepEqual(noCwd, [
    {
      flags: 2,
      message: { error: { code: 'invalid_argument', message: 'working directory /home/user/not-there does not exist' } }
    }
  ])
  await api('DELETE', `/sandboxes/${box.id}`)
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
