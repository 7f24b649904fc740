/**
 * The OpenAPI document against a real fleet (bubblewrap runner, gateway over HTTP, API keys on):
 * it is valid OpenAPI 3.1, it names every route the gateway has, the captured SandboxFusion and
 * code-judge samples fit its compat schemas, each operation's live answers (a success and an
 * error; an API's own, from its test folder's `openapi-calls.json`) fit the response schema of their status and media
 * type, and /docs renders every operation in headless Chromium with no network.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { startFleet, type TestFleet } from './helpers/fleet.ts'

const KEY = 'openapi-test-key'
const METHODS = ['get', 'post', 'delete', 'put', 'patch'] as const

interface Operation {
  operationId?: string
  tags?: string[]
  security?: Array<Record<string, string[]>>
  requestBody?: any
  responses: Record<string, any>
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } }

/**
 * One live call an API's test folder gives (`services/gateway/test/apis/NAME/openapi-calls.json`): its request and the
 * status it gets.
 */
interface ApiCall {
  file: string
  method: string
  url: string
  body?: unknown
  status: number
}

/** The live calls of every API that gives them: each answer is held to the document like the calls below. */
async function loadApiCalls(): Promise<ApiCall[]> {
  const apis = new URL('../services/gateway/test/apis/', import.meta.url)
  const out: ApiCall[] = []
  for (const name of (await readdir(apis, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()) {
    const file = new URL(`${name}/openapi-calls.json`, apis)
    const text = await readFile(file, 'utf8').catch(() => undefined)
    if (text !== undefined)
      out.push(
        ...(JSON.parse(text) as Array<Omit<ApiCall, 'file'>>).map((c) => ({ file: `${name}/openapi-calls.json`, ...c }))
      )
  }
  return out
}

const apiCalls = await loadApiCalls()
let fleet: TestFleet
let doc: Doc
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
/** Operations whose live success / error answers were checked. */
const checked = { ok: new Set<string>(), error: new Set<string>() }

before(async () => {
  fleet = await startFleet(['oa-1'], { poolSize: 2, maxSessions: 4 }, { apiKeys: [KEY] })
  const res = await fetch(`${fleet.url}/openapi.json`)
  assert.equal(res.status, 200, 'the document needs no key')
  doc = (await res.json()) as Doc
  ajv.addSchema(doc, 'openapi.json')
})
after(async () => {
  await fleet?.close()
})

const pointer = (...parts: string[]): string =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

/** The operation `method` of the document path template matching `url`. */
function operationOf(method: string, url: string): { path: string; op: Operation } {
  const pathname = new URL(url, 'http://x').pathname
  for (const [path, item] of Object.entries(doc.paths)) {
    const re = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
    const op = item[method.toLowerCase()]
    if (re.test(pathname) && op !== undefined) return { path, op }
  }
  throw new Error(`no operation ${method} ${pathname} in the document`)
}

/** Asserts `body` (of HTTP `status`, media type `type`) fits the schema the document gives that answer. */
function assertFits(method: string, url: string, status: number, type: string, body: unknown): void {
  const { path, op } = operationOf(method, url)
  const code = [String(status), `${String(status)[0]}XX`, 'default'].find((c) => op.responses[c] !== undefined)
  assert.ok(code !== undefined, `${op.operationId}: HTTP ${status} is not documented`)
  const response = op.responses[code]
  const media = type.split(';')[0]?.trim() ?? ''
  if (response.content === undefined) {
    assert.ok(
      body === undefined || body === '',
      `${op.operationId}: HTTP ${status} documents no body, got ${String(body).slice(0, 80)}`
    )
  } else {
    assert.ok(response.content[media] !== undefined, `${op.operationId}: HTTP ${status} ${media} is not documented`)
    const validate = ajv.getSchema(
      `openapi.json#${pointer('', 'paths', path, method.toLowerCase(), 'responses', code, 'content', media, 'schema')}`
    )
    assert.ok(validate !== undefined)
    assert.ok(
      validate(body),
      `${op.operationId} HTTP ${status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body).slice(0, 300)}`
    )
  }
  checked[status < 400 ? 'ok' : 'error'].add(op.operationId ?? '')
}

/** Calls the fleet's gateway and checks the answer against the document; answers status and body. */
async function call(
  method: string,
  url: string,
  body?: unknown,
  options: { key?: boolean; accept?: string; raw?: boolean } = {}
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {}
  if (options.key !== false) headers.authorization = `Bearer ${KEY}`
  if (options.accept !== undefined) headers.accept = options.accept
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(fleet.url + url, {
    method,
    headers,
    redirect: 'manual',
    ...(body === undefined ? {} : { body: options.raw === true ? String(body) : JSON.stringify(body) })
  })
  const type = res.headers.get('content-type') ?? ''
  const text = await res.text()
  const parsed = type.includes('json') && text !== '' ? JSON.parse(text) : text
  assertFits(method, url, res.status, type, parsed)
  return { status: res.status, body: parsed }
}

test('the document is valid OpenAPI 3.1 and every schema in it compiles', async () => {
  const result = await new Validator().validate(structuredClone(doc) as Record<string, unknown>)
  assert.deepEqual(result, { valid: true })
  let schemas = 0
  for (const name of Object.keys(doc.components.schemas)) {
    assert.ok(ajv.getSchema(`openapi.json#${pointer('', 'components', 'schemas', name)}`), name)
    schemas++
  }
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [code, response] of Object.entries(op.responses)) {
        for (const media of Object.keys(response.content ?? {})) {
          assert.ok(
            ajv.getSchema(
              `openapi.json#${pointer('', 'paths', path, method, 'responses', code, 'content', media, 'schema')}`
            )
          )
          schemas++
        }
      }
    }
  }
  assert.ok(schemas > 60, `${schemas} schemas compiled`)
  for (const name of [
    'ExecRequest',
    'ExecResult',
    'ErrorBody',
    'RunCodeRequest',
    'RunCodeResponse',
    'Submission',
    'RunResult',
    'JsonRpcRequest'
  ]) {
    assert.ok(doc.components.schemas[name] !== undefined, `${name} is a named schema`)
  }
  const cpu = (
    doc.components.schemas.ExecResult as {
      properties: Record<string, { type?: string; minimum?: number; description?: string }>
      required?: string[]
    }
  ).properties.cpu_ms
  assert.deepEqual([cpu?.type, cpu?.minimum], ['number', 0], 'ExecResult documents cpu_ms')
  assert.match(cpu?.description ?? '', /user \+ system.*kernel/, 'and says what it measures')
  assert.equal(
    (doc.components.schemas.ExecResult as { required?: string[] }).required?.includes('cpu_ms'),
    false,
    'cpu_ms may be absent'
  )
})

test('every route the gateway has is in the document, with a unique operationId, tags and the API-key security it needs', async () => {
  // The gateway's routes as Fastify prints them (a tree of path segments); HEAD twins of GET routes are Fastify's own.
  const app = fleet.gateway.app
  const routes: string[] = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)( \{.*\})?$/.exec(line)
    if (m === null) continue
    const depth = (m[1] ?? '').length / 4
    stack.length = depth
    stack.push(m[2] ?? '')
    // a route that only a header's value reaches (E2B's sandbox URL, by E2b-Sandbox-Port) is another protocol's, not
    // an operation of this document
    if (m[4] !== undefined) continue
    const url = stack.join('').replace(/:(\w+)/g, '{$1}')
    for (const method of (m[3] ?? '').split(', ')) if (method !== 'HEAD') routes.push(`${method} ${url}`)
  }
  const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`)
  )
  assert.ok(routes.length >= 26, `${routes.length} routes read from printRoutes`)
  assert.deepEqual(documented.sort(), routes.sort())
  const ops = Object.values(doc.paths).flatMap((item) => Object.values(item))
  const ids = ops.map((op) => op.operationId)
  assert.ok(
    ids.every((id) => typeof id === 'string' && /^[a-zA-Z][a-zA-Z0-9]*$/.test(id)),
    JSON.stringify(ids)
  )
  assert.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  assert.ok(ops.every((op) => (op.tags?.length ?? 0) > 0 && Object.keys(op.responses).length > 0))
  const open = ['healthz', 'readyz', 'metrics', 'openapi', 'docs', 'docsJson']
  for (const op of ops)
    assert.deepEqual(
      op.security,
      open.includes(op.operationId ?? '') ? [] : [{ bearer: [] }, { apiKey: [] }],
      op.operationId
    )
  assert.deepEqual(Object.keys((doc as any).components.securitySchemes).sort(), ['apiKey', 'bearer'])
  assert.deepEqual((doc as any).components.securitySchemes.apiKey, {
    ...(doc as any).components.securitySchemes.apiKey,
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key'
  })
})

test('the captured SandboxFusion and code-judge samples fit the compat schemas: accepted requests pass, refused ones fail, answers fit', async () => {
  const fixtures = new URL('../services/gateway/test/apis/fixtures/', import.meta.url)
  const sf = JSON.parse(await readFile(new URL('sandboxfusion.json', fixtures), 'utf8')) as any[]
  const cj = JSON.parse(await readFile(new URL('code-judge.json', fixtures), 'utf8')) as any[]
  const samples = [
    ...sf.map((s) => ({ ...s, method: 'POST', path: s.case.startsWith('jupyter') ? '/run_jupyter' : '/run_code' })),
    ...cj.map((s) => ({ ...s, method: s.method ?? 'POST' }))
  ]
  assert.ok(samples.length >= 18)
  for (const s of samples) {
    const { path, op } = operationOf(s.method, s.path)
    if (s.request !== undefined) {
      const validate = ajv.getSchema(
        `openapi.json#${pointer('', 'paths', path, s.method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema')}`
      )
      assert.ok(validate !== undefined, op.operationId)
      assert.equal(
        validate(s.request),
        s.http_status !== 422,
        `${op.operationId} ${s.case ?? ''}: ${ajv.errorsText(validate.errors)}`
      )
    }
    assertFits(s.method, s.path, s.http_status, 'application/json', s.response)
  }
})

test('live answers of every operation, a success and an error each, fit the document', async () => {
  // the native API
  const answered = (await call('POST', '/v1/execute', { code: 'print(6 * 7)' })).body
  assert.equal(answered.stdout, '42\n')
  assert.ok(
    typeof answered.cpu_ms === 'number' && answered.cpu_ms > 0,
    `the job's own CPU reaches the caller: ${String(answered.cpu_ms)}`
  )
  assert.equal((await call('POST', '/v1/execute', { code: 5 })).status, 400)
  assert.equal(
    (await call('POST', '/v1/execute/batch', { requests: [{ code: 'print(1)' }, { code: '1/0' }] })).body.results[1]
      .status,
    'error'
  )
  const streamed = await fetch(`${fleet.url}/v1/execute/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify({ requests: [{ code: 'print(1)' }, { code: 'print(2)' }] })
  })
  const lines = (await streamed.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.equal(lines.length, 2)
  for (const line of lines)
    assertFits('POST', '/v1/execute/batch', streamed.status, streamed.headers.get('content-type') ?? '', line)
  assert.equal((await call('POST', '/v1/execute/batch', { requests: [] })).status, 400)
  const session = await call('POST', '/v1/sessions', {})
  assert.equal(session.status, 201)
  const id = session.body.session_id as string
  assert.equal(
    (await call('POST', `/v1/sessions/${id}/execute`, { code: 'x = 41\nx + 1' })).body.display[0]['text/plain'],
    '42'
  )
  assert.equal((await call('GET', `/v1/sessions/${id}`)).status, 200)
  assert.equal((await call('POST', `/v1/sessions/${id}/execute`, { code: 1 })).status, 400)
  assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 204)
  assert.equal((await call('GET', `/v1/sessions/${id}`)).status, 404)
  assert.equal((await call('DELETE', `/v1/sessions/${id}`)).status, 404)
  assert.equal((await call('POST', `/v1/sessions/${id}/execute`, { code: 'x' })).status, 404)
  assert.equal((await call('POST', '/v1/sessions', { ttl_s: -1 })).status, 400)
  assert.equal((await call('GET', '/v1/info')).body.backends[0], 'process')

  // SandboxFusion
  assert.equal(
    (await call('POST', '/run_code', { code: 'print(input())', language: 'python', stdin: 'hi', run_timeout: 5 })).body
      .run_result.stdout,
    'hi\n'
  )
  assert.equal((await call('POST', '/run_code', { code: 'x', language: 'cobol' })).status, 422)
  assert.equal(
    (await call('POST', '/run_code', { code: 'x', language: 'python', files: { '/etc/x': 'eA==' } })).status,
    422
  )
  assert.equal(
    (await call('POST', '/run_jupyter', { cells: ['y = 1', '1/0', 'y + 1'], cell_timeout: 5 })).body.cells[1].error[0]
      .ename,
    'ZeroDivisionError'
  )
  assert.equal((await call('POST', '/run_jupyter', { cell_timeout: 5 })).status, 422)
  assert.equal((await call('POST', '/run_code', '{"code":', { raw: true })).status, 422)

  // code-judge
  for (const mode of ['run', 'judge']) {
    const sub = { type: 'python', solution: 'print(int(input()) * 2)', input: '21', expected_output: '42' }
    assert.equal((await call('POST', `/${mode}`, sub)).body.success, true)
    assert.equal((await call('POST', `/${mode}`, { type: 'python' })).status, 422)
    for (const batch of ['batch', 'long-batch']) {
      // a cpp submission is compiled and run beside the Python one
      assert.equal(
        (
          await call('POST', `/${mode}/${batch}`, {
            type: 'batch',
            submissions: [sub, { type: 'cpp', solution: 'int main(){}' }]
          })
        ).body.results[1].run_success,
        true
      )
      assert.equal(
        (await call('POST', `/${mode}/${batch}`, { type: 'batch', submissions: [{ type: 'ruby', solution: '' }] }))
          .status,
        422
      )
    }
  }
  assert.equal((await call('GET', '/status')).body.num_workers, 2)
  assert.equal((await call('GET', '/ping')).body, 'pong')

  // MCP
  const listed = await call(
    'POST',
    '/mcp',
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { accept: 'application/json, text/event-stream' }
  )
  assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === 'run_python'))
  const ran = await call(
    'POST',
    '/mcp',
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'print(7)' } } },
    { accept: 'application/json, text/event-stream' }
  )
  assert.equal(ran.body.result.structuredContent.stdout, '7\n')
  assert.equal(
    (
      await call(
        'POST',
        '/mcp',
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { accept: 'application/json, text/event-stream' }
      )
    ).status,
    202
  )
  // a JSON-RPC batch: the document describes the array and its array of answers
  const batch = [
    { jsonrpc: '2.0', id: 10, method: 'tools/list' },
    { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'print(8)' } } }
  ]
  const validateBatch = ajv.getSchema(
    `openapi.json#${pointer('', 'paths', '/mcp', 'post', 'requestBody', 'content', 'application/json', 'schema')}`
  )
  assert.ok(validateBatch?.(batch), `the batch fits the request body: ${ajv.errorsText(validateBatch?.errors)}`)
  const answers = await call('POST', '/mcp', batch, { accept: 'application/json, text/event-stream' })
  assert.deepEqual(answers.body.map((a: { id: number }) => a.id).sort(), [10, 11])
  assert.equal(answers.body.find((a: { id: number }) => a.id === 11).result.structuredContent.stdout, '8\n')
  assert.ok(
    (await call('POST', '/mcp', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { accept: 'text/html' })).status >= 400
  )
  assert.equal((await call('GET', '/mcp')).status, 405)
  assert.equal((await call('DELETE', '/mcp')).status, 405)

  // E2B's API URL: a sandbox's life (its sandbox URL speaks E2B's own protocols, not described here: e2b-sdk.test.ts)
  const made = await call('POST', '/v2/sandboxes', { templateID: 'code-interpreter-v1', timeout: 60 })
  assert.equal(made.status, 201)
  const sandbox = `/sandboxes/${made.body.sandboxID as string}`
  assert.equal((await call('GET', sandbox)).body.state, 'running')
  assert.equal((await call('POST', `${sandbox}/timeout`, { timeout: 120 })).status, 204)
  assert.equal((await call('POST', `/v2${sandbox}/connect`, { timeout: 30 })).body.sandboxID, made.body.sandboxID)
  assert.equal((await call('POST', `${sandbox}/connect`, {})).status, 200)
  assert.equal((await call('POST', `${sandbox}/timeout`, { timeout: -1 })).status, 400)
  assert.equal((await call('POST', `${sandbox}/pause`, {})).status, 501)
  assert.equal((await call('DELETE', sandbox)).status, 204)
  for (const [method, url, body] of [
    ['GET', sandbox],
    ['DELETE', sandbox],
    ['POST', `${sandbox}/timeout`, { timeout: 5 }],
    ['POST', `/v2${sandbox}/connect`, {}],
    ['POST', `${sandbox}/connect`, {}]
  ] as const)
    assert.equal((await call(method, url, body)).status, 404, `${method} ${url} of a sandbox killed`)

  // the APIs that give their live calls in their test folders
  for (const c of apiCalls)
    assert.equal((await call(c.method, c.url, c.body)).status, c.status, `${c.file}: ${c.method} ${c.url}`)

  // operations and the description
  assert.equal((await call('GET', '/healthz', undefined, { key: false })).body.status, 'ok')
  assert.equal((await call('GET', '/readyz', undefined, { key: false })).body.status, 'ready')
  assert.match((await call('GET', '/metrics', undefined, { key: false })).body, /^# HELP sandfleet_/m)
  assert.equal((await call('GET', '/openapi.json', undefined, { key: false })).body.openapi, '3.1.0')
  assert.match((await call('GET', '/docs', undefined, { key: false })).body, /<title>sandfleet API<\/title>/)
  assert.equal((await call('GET', '/docs/json', undefined, { key: false })).status, 301)

  // every operation that needs a key, without one: 401 in its documented error shape
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if ((op.security?.length ?? 0) === 0) continue
      const url = path.replace('{id}', 'nope')
      const res = await call(method.toUpperCase(), url, method === 'post' ? {} : undefined, { key: false })
      assert.equal(res.status, 401, `${method} ${url}`)
    }
  }

  // readiness when no runner is ready: 503; a key past its quota: 429 (each API in its own shape)
  const dir = await mkdtemp(join(tmpdir(), 'sf-openapi-keys-'))
  await writeFile(join(dir, 'keys'), 'openapi-slow-key slow ratePerSecond=0.001\n')
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { runners: [], apiKeysFile: join(dir, 'keys') } }),
    logger: false
  })
  try {
    const res = await app.inject({ url: '/readyz' })
    assert.equal(res.statusCode, 503)
    assertFits('GET', '/readyz', 503, res.headers['content-type'] as string, res.json())
    const headers = { authorization: 'Bearer openapi-slow-key', accept: 'application/json, text/event-stream' }
    // the bucket holds one call: a body the route refuses takes none of it (parse comes before the
    // quota), a call the pipeline lets through (to no runner) takes it
    assert.equal((await app.inject({ method: 'POST', url: '/run_code', headers, payload: {} })).statusCode, 422)
    assert.notEqual(
      (await app.inject({ method: 'POST', url: '/v1/execute', headers, payload: { code: 'print(0)' } })).statusCode,
      429
    )
    const calls: Array<[string, object]> = [
      ['/v1/execute', { code: 'print(1)' }],
      ['/run_code', { code: 'print(1)', language: 'python' }],
      ['/run', { type: 'python', solution: 'print(1)' }],
      [
        '/mcp',
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'print(1)' } } }
      ],
      [
        '/mcp',
        [
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'run_python', arguments: { code: 'print(2)' } }
          }
        ]
      ],
      ...apiCalls
        .filter((c) => c.method === 'POST' && c.status < 400)
        .map((c): [string, object] => [c.url, c.body as object])
    ]
    for (const [url, payload] of calls) {
      const refused = await app.inject({ method: 'POST', url, headers, payload })
      assert.equal(refused.statusCode, 429, url)
      assertFits('POST', url, 429, refused.headers['content-type'] as string, refused.json())
      // the Retry-After the document declares for the 429, as the answer carries it
      const declared = operationOf('POST', url).op.responses['429']?.headers?.['retry-after']
      assert.ok(declared !== undefined, `${url}: the 429's Retry-After is declared`)
      assert.ok(
        ajv.validate(declared.schema, Number(refused.headers['retry-after'])) &&
          /^\d+$/.test(String(refused.headers['retry-after'])),
        `${url}: Retry-After ${String(refused.headers['retry-after'])}`
      )
    }
    // every POST passes the API key's quotas: each declares its 429 and Retry-After
    const posts = Object.values(doc.paths).flatMap((item) => (item.post === undefined ? [] : [item.post]))
    assert.deepEqual(
      posts.filter((op) => op.responses['429']?.headers?.['retry-after'] === undefined).map((op) => op.operationId),
      []
    )
  } finally {
    await app.close()
    await rm(dir, { recursive: true, force: true })
  }

  // (GET and DELETE /mcp never succeed: the server is stateless)
  const succeeding = Object.values(doc.paths)
    .flatMap((item) => Object.values(item))
    .filter((op) => Object.keys(op.responses).some((c) => c < '4'))
  assert.ok(succeeding.length >= 24)
  assert.deepEqual(
    succeeding.map((op) => op.operationId ?? '').filter((id) => !checked.ok.has(id)),
    [],
    'operations without a checked success'
  )
  const withErrors = Object.values(doc.paths)
    .flatMap((item) => Object.values(item))
    .filter((op) => Object.keys(op.responses).some((c) => c >= '4'))
  assert.deepEqual(
    withErrors.map((op) => op.operationId ?? '').filter((id) => !checked.error.has(id)),
    [],
    'operations without a checked error'
  )
})

test('/docs renders every operation in headless Chromium, with no network', async () => {
  const page = await (await fetch(`${fleet.url}/docs`)).text()
  assert.doesNotMatch(page, /<link|src=|https?:\/\/|url\(/, 'nothing to fetch but openapi.json beside it')
  const dir = await mkdtemp(join(tmpdir(), 'sf-openapi-'))
  try {
    const dom = await new Promise<string>((resolve, reject) => {
      const args = [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        `--user-data-dir=${dir}`,
        '--virtual-time-budget=10000',
        '--dump-dom',
        `${fleet.url}/docs`
      ]
      const child = spawn('/usr/bin/chromium', args, { stdio: ['ignore', 'pipe', 'ignore'] })
      let text = ''
      child.stdout.setEncoding('utf8').on('data', (s: string) => {
        text += s
      })
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.once('error', reject)
      child.once('close', (code) => {
        clearTimeout(timer)
        if (code === 0) resolve(text)
        else reject(new Error(`chromium exited ${String(code)}`))
      })
    })
    const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId ?? ''))
    assert.match(dom, new RegExp(`data-rendered="${ids.length}"`), 'every operation rendered')
    for (const id of ids) assert.match(dom, new RegExp(`<code class="operation-id">${id}</code>`), id)
    assert.match(dom, /<h3 id="schema-RunCodeResponse">/, 'named schemas listed')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
