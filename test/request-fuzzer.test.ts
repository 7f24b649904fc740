/**
 * A seeded request fuzzer over every route of the gateway (the native API, sessions, the compat
 * APIs, MCP, operations, unknown paths) and of the runner's internal API: broken JSON, wrong
 * types, huge numbers, deep nesting, unicode and control characters, long headers and query
 * strings, wrong content types, oversized batches. Every answer is below 500, every error is
 * JSON in its API's documented shape (docs/errors.md: the ErrorBody; FastAPI's `detail` on the
 * compat routes; JSON-RPC on /mcp), and both servers serve a plain call after.
 * SANDFLEET_FUZZ_SEED and SANDFLEET_FUZZ_REQUESTS change the run (the seed of a failure is printed).
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { buildRunnerApp, Runner, runnerConfig } from '@sandfleet/runner'
import { seededRandom } from '@sandfleet/trainer'
import { echoRunner } from '../services/gateway/test/helpers/fake-runner.ts'
import { ScriptedDriver } from '../services/runner/test/helpers/scripted-driver.ts'

const SEED = Number(process.env.SANDFLEET_FUZZ_SEED ?? 18)
const REQUESTS = Number(process.env.SANDFLEET_FUZZ_REQUESTS ?? 10_000)

/** A seeded generator, so a failure can be replayed. */
const generator = seededRandom

const random = generator(SEED)
const int = (n: number): number => Math.floor(random() * n)
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T

const STRINGS = [
  '',
  ' ',
  'print(1)',
  'x'.repeat(10_000),
  '\u0000\u0001\u001b[2J\r\n',
  '\ud800',
  '\udfff\ud800',
  '💥'.repeat(300),
  'ﷺ\u202e\u200b',
  '${jndi:x}',
  '../../etc/passwd',
  '%00',
  '\\',
  '"',
  'null',
  'python',
  'javascript',
  '__proto__',
  'constructor',
  'a\u2028b'
]
const NUMBERS = [
  0,
  -1,
  1,
  0.5,
  -0.0,
  1e308,
  -1e308,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  1e-320,
  3_600_001,
  65_537,
  16,
  15
]

/** A JSON value of any type, nested up to `depth`. */
function value(depth = 0): unknown {
  const k = int(depth > 3 ? 5 : 8)
  switch (k) {
    case 0:
      return pick(STRINGS)
    case 1:
      return pick(NUMBERS)
    case 2:
      return random() < 0.5
    case 3:
      return null
    case 4:
      return String(pick(NUMBERS))
    case 5:
      return Array.from({ length: int(4) }, () => value(depth + 1))
    case 6:
      return Object.fromEntries(Array.from({ length: int(4) }, () => [pick(STRINGS).slice(0, 20), value(depth + 1)]))
    default:
      return nested(1 + int(120))
  }
}

/** `[[[…]]]` or `{"a":{"a":…}}`, `depth` levels. */
function nested(depth: number): unknown {
  let v: unknown = random() < 0.5 ? [] : {}
  for (let i = 1; i < depth; i++) v = random() < 0.5 ? [v] : { a: v }
  return v
}

/** The text of a body nested `depth` levels (built as text: JSON.stringify itself overflows at such depths). */
function nestedText(depth: number): string {
  const open = Array.from({ length: depth }, () => (random() < 0.5 ? '[' : '{"a":'))
  return (
    open.join('') +
    open
      .reverse()
      .map((o) => (o === '[' ? ']' : '}'))
      .join('')
      .replace(/^[\]}]/, (c) => (c === ']' ? ']' : 'null}'))
  )
}

/** A valid body of each kind of route, to mutate. */
const TEMPLATES: Record<string, () => Record<string, unknown>> = {
  exec: () => ({
    code: 'print(1)',
    language: 'python',
    stdin: '',
    timeout_ms: 1000,
    memory_mb: 256,
    files: { 'a.txt': 'aGk=' },
    fetch_files: ['a.txt'],
    request_id: 'r'
  }),
  batch: () => ({ requests: [{ code: 'print(1)' }, { code: 'print(2)' }] }),
  session: () => ({ language: 'python', ttl_s: 60, memory_mb: 256 }),
  cell: () => ({ code: 'x = 1', timeout_ms: 1000 }),
  runCode: () => ({
    code: 'print(1)',
    language: 'python',
    run_timeout: 1,
    memory_limit_MB: -1,
    stdin: '',
    files: {},
    fetch_files: []
  }),
  jupyter: () => ({ cells: ['x = 1', 'print(x)'], cell_timeout: 1, total_timeout: 5 }),
  submission: () => ({ type: 'python', solution: 'print(1)', input: '', expected_output: '1\n' }),
  judgeBatch: () => ({ sub_id: 's', submissions: [{ type: 'python', solution: 'print(1)' }] }),
  mcp: () => ({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'run_python', arguments: { code: 'print(1)' } }
  })
}

/** The error shape each route family documents. */
type Shape = 'sandfleet' | 'fastapi' | 'mcp'

interface Route {
  method: 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH'
  url: string
  template?: keyof typeof TEMPLATES
  shape: Shape
}

const GATEWAY_ROUTES: Route[] = [
  { method: 'POST', url: '/v1/execute', template: 'exec', shape: 'sandfleet' },
  { method: 'POST', url: '/v1/execute/batch', template: 'batch', shape: 'sandfleet' },
  { method: 'POST', url: '/v1/sessions', template: 'session', shape: 'sandfleet' },
  { method: 'POST', url: '/v1/sessions/ID/execute', template: 'cell', shape: 'sandfleet' },
  { method: 'GET', url: '/v1/sessions/ID', shape: 'sandfleet' },
  { method: 'DELETE', url: '/v1/sessions/ID', shape: 'sandfleet' },
  { method: 'POST', url: '/run_code', template: 'runCode', shape: 'fastapi' },
  { method: 'POST', url: '/run_jupyter', template: 'jupyter', shape: 'fastapi' },
  ...['run', 'judge'].flatMap((m): Route[] => [
    { method: 'POST', url: `/${m}`, template: 'submission', shape: 'fastapi' },
    { method: 'POST', url: `/${m}/batch`, template: 'judgeBatch', shape: 'fastapi' },
    { method: 'POST', url: `/${m}/long-batch`, template: 'judgeBatch', shape: 'fastapi' }
  ]),
  { method: 'POST', url: '/mcp', template: 'mcp', shape: 'mcp' },
  { method: 'GET', url: '/mcp', shape: 'mcp' },
  ...['/healthz', '/readyz', '/metrics', '/v1/info', '/openapi.json', '/docs', '/status', '/ping'].map(
    (url): Route => ({ method: 'GET', url, shape: url === '/status' || url === '/ping' ? 'fastapi' : 'sandfleet' })
  ),
  { method: 'PUT', url: '/v1/execute', template: 'exec', shape: 'sandfleet' },
  { method: 'GET', url: '/nowhere/%ff%fe', shape: 'sandfleet' }
]

const RUNNER_ROUTES: Route[] = [
  { method: 'POST', url: '/v1/execute', template: 'exec', shape: 'sandfleet' },
  { method: 'POST', url: '/v1/execute/batch', template: 'batch', shape: 'sandfleet' },
  // (no session routes here: the scripted driver holds no sessions, and the runner answers them 501
  // SF_ERR_SESSION_DISABLED)
  { method: 'GET', url: '/v1/sessions/ID/nowhere', shape: 'sandfleet' },
  { method: 'GET', url: '/v1/runner/load', shape: 'sandfleet' },
  { method: 'GET', url: '/v1/info', shape: 'sandfleet' },
  { method: 'PATCH', url: '/v1/runner/load', shape: 'sandfleet' }
]

const SESSION_IDS = ['x', '%2e%2e', 'a'.repeat(600), encodeURIComponent('\u0000💥'), 'echo.s1', '..%2F..%2Fetc']
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/jsonx',
  '*/*',
  ''
]

/** One generated request for `route`. */
function request(route: Route): InjectOptions {
  const url =
    route.url.replace('ID', pick(SESSION_IDS)) +
    (random() < 0.1 ? `?${'q='.padEnd(int(8000), 'x')}&${pick(STRINGS).slice(0, 30)}` : '')
  const headers: Record<string, string> = {}
  if (random() < 0.05) headers['x-long'] = 'v'.repeat(int(16_000))
  if (random() < 0.05) headers.accept = pick(['application/x-ndjson', 'text/event-stream', '*/*', 'x/y'])
  if (random() < 0.05) headers['x-sandfleet-queue-timeout-ms'] = String(pick([...NUMBERS, ...STRINGS.slice(0, 8)]))
  if (random() < 0.03) headers.authorization = `Bearer ${pick(STRINGS).slice(0, 100)}`
  if (route.method === 'GET' || route.method === 'DELETE') return { method: route.method, url, headers }
  const body: Record<string, unknown> = TEMPLATES[route.template ?? 'exec']()
  let payload: string
  const kind = int(10)
  if (kind <= 3) {
    // wrong types or values in 1-3 fields (known or unknown)
    for (let i = 0; i <= int(3); i++)
      body[random() < 0.8 ? pick(Object.keys(body)) : pick(STRINGS).slice(0, 20)] = value()
    payload = JSON.stringify(body)
  } else if (kind === 4) {
    payload = random() < 0.8 ? JSON.stringify(nested(1 + int(300))) : nestedText(pick([5000, 20_000]))
  } else if (kind === 5) {
    // broken JSON: cut, or a byte changed
    const text = JSON.stringify(body)
    payload =
      random() < 0.5
        ? text.slice(0, int(text.length))
        : text.slice(0, int(text.length)) +
          pick(['\u0000', '}', '{', ',', '"', 'NaN', '\\x']) +
          text.slice(int(text.length))
  } else if (kind === 6) {
    // oversized batches
    const item = route.template === 'judgeBatch' ? { type: 'python', solution: 'print(1)' } : { code: 'print(1)' }
    const items = Array.from({ length: pick([1025, 2000, 5000]) }, () => item)
    payload = JSON.stringify(route.template === 'judgeBatch' ? { submissions: items } : { requests: items })
  } else if (kind === 7) {
    payload = JSON.stringify(value())
  } else if (kind === 8) {
    payload = pick([
      '',
      ' ',
      'null',
      '[]',
      '"x"',
      '1e999',
      '{"code": "print(1)", "code": 5}',
      '{"__proto__": {"a": 1}}',
      '{"constructor": {"prototype": {}}}',
      '\ufeff{}'
    ])
  } else {
    payload = JSON.stringify(body)
  }
  headers['content-type'] = random() < 0.8 ? 'application/json' : pick(CONTENT_TYPES)
  if (headers['content-type'] === '') delete headers['content-type']
  return { method: route.method, url, headers, payload }
}

/** Why `body` is not an error of `shape` (undefined when it is). */
function shapeProblem(shape: Shape, statusCode: number, body: unknown): string | undefined {
  const b = body as Record<string, any> | null
  if (typeof b !== 'object' || b === null) return 'not a JSON object'
  if (shape === 'fastapi' && b.detail !== undefined) {
    if (typeof b.detail === 'string') return undefined
    if (
      Array.isArray(b.detail) &&
      b.detail.every((d: any) => typeof d.type === 'string' && Array.isArray(d.loc) && typeof d.msg === 'string')
    )
      return undefined
    return 'detail is neither a string nor pydantic error items'
  }
  if (
    shape === 'mcp' &&
    b.jsonrpc === '2.0' &&
    typeof b.error?.code === 'number' &&
    typeof b.error?.message === 'string'
  )
    return undefined
  // the ErrorBody (every route answers it for what happens before the route: 404, 413, 415, auth, admission)
  if (
    typeof b.status === 'string' &&
    typeof b.error?.code === 'string' &&
    /^SF_ERR_[A-Z0-9_]+$/.test(b.error.code) &&
    typeof b.error?.message === 'string'
  ) {
    if (b.error.field !== undefined && typeof b.error.field !== 'string') return 'error.field is not a string'
    return undefined
  }
  return `not the ${shape} error shape (HTTP ${statusCode})`
}

let gateway: FastifyInstance
let runnerApp: FastifyInstance
let runner: Runner
before(async () => {
  ;({ app: gateway } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { maxBodyBytes: 1 << 20 } }),
    clients: [echoRunner('echo')],
    logger: false
  }))
  await gateway.ready()
  runner = new Runner(runnerConfig({ id: 'fuzz-runner', poolSize: 2, maxBodyBytes: 1 << 20, languages: ['python'] }), {
    driver: new ScriptedDriver()
  })
  await runner.start()
  runnerApp = buildRunnerApp(runner)
  await runnerApp.ready()
})
after(async () => {
  await gateway?.close()
  await runnerApp?.close()
  await runner?.close()
})

test(`${REQUESTS} generated hostile requests (seed ${SEED}) on every route: never a 5xx, every error in its documented shape, the servers serve after`, async () => {
  const failures: string[] = []
  const started = performance.now()
  const counts = new Map<number, number>()
  for (let i = 0; i < REQUESTS; i++) {
    const onRunner = i % 5 === 4
    const route = pick(onRunner ? RUNNER_ROUTES : GATEWAY_ROUTES)
    const options = request(route)
    // The runner's scripted driver reads `code` as a command: only echo (never sleep) there.
    if (onRunner && typeof options.payload === 'string')
      options.payload = options.payload.replace(/print\(\d\)/g, 'echo fuzz')
    const res = await (onRunner ? runnerApp : gateway).inject(options)
    counts.set(res.statusCode, (counts.get(res.statusCode) ?? 0) + 1)
    const what = `#${i} ${onRunner ? 'runner' : 'gateway'} ${options.method} ${String(options.url).slice(0, 80)} ${JSON.stringify(options.payload ?? '').slice(0, 160)} → ${res.statusCode} ${res.body.slice(0, 200)}`
    if (res.statusCode >= 500) failures.push(`5xx: ${what}`)
    else if (res.statusCode >= 400) {
      let body: unknown
      try {
        body = res.json()
      } catch {
        failures.push(`not JSON: ${what}`)
        continue
      }
      const problem = shapeProblem(route.shape, res.statusCode, body)
      if (problem !== undefined) failures.push(`${problem}: ${what}`)
    }
    if (failures.length >= 10) break
  }
  assert.deepEqual(failures, [], `seed ${SEED}`)
  assert.ok((counts.get(200) ?? 0) > REQUESTS / 20, `some requests were valid and ran: ${JSON.stringify([...counts])}`)
  assert.ok(
    [...counts.keys()].filter((c) => c >= 400).length >= 4,
    `several kinds of refusal: ${JSON.stringify([...counts])}`
  )
  const plain = await gateway.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'print(42)' } })
  assert.deepEqual([plain.statusCode, plain.json().stdout], [200, 'print(42)'], 'the gateway serves after')
  const direct = await runnerApp.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'echo after' } })
  assert.deepEqual([direct.statusCode, direct.json().stdout], [200, 'after\n'], 'the runner serves after')
  process.stdout.write(
    `# fuzzer: ${REQUESTS} requests in ${Math.round(performance.now() - started)} ms, statuses ${JSON.stringify([...counts].sort((a, b) => a[0] - b[0]))}\n`
  )
})
