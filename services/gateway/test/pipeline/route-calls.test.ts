import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { loadGatewayConfig } from '@sandfleet/gateway'
import type { ApiContext } from '../../src/apis/api.ts'
import { APIS } from '../../src/apis/index.ts'
import { weightOf, type RouteCalls } from '../../src/pipeline/route-calls.ts'
import { routeSchemas } from '../../src/schemas.ts'

/**
 * Every call route of every API, by `METHOD url`, as the APIs declare them (nothing registered outside their folders).
 */
async function declaredCalls(): Promise<Map<string, RouteCalls>> {
  const app = Fastify({ logger: false })
  const declared = new Map<string, RouteCalls>()
  app.addHook('onRoute', (route) => {
    if (route.config?.calls !== undefined) declared.set(`${String(route.method)} ${route.url}`, route.config.calls)
  })
  const config = loadGatewayConfig({ env: {} })
  // the routes are declared at registration; nothing here is called
  const context = {
    config,
    router: {},
    runners: { members: [] },
    sessions: {},
    schemas: routeSchemas(config),
    tenants: []
  } as unknown as ApiContext
  for (const api of APIS) await app.register(api.routes, context)
  await app.ready()
  await app.close()
  return declared
}

test('each API declares its call routes: a batch weighs its items, a notebook one call, an MCP message its tool calls', async () => {
  const declared = await declaredCalls()
  const weight = (route: string, body: unknown): number => {
    const calls = declared.get(route)
    assert.ok(calls !== undefined, `${route} declares its calls`)
    return weightOf(calls, body, calls.of(body))
  }
  const sub = { type: 'python', solution: 'print(1)' }
  assert.equal(weight('POST /v1/execute', { code: 'x' }), 1)
  assert.equal(weight('POST /v1/execute/batch', { requests: [{ code: 'a' }, { code: 'b' }, { code: 'c' }] }), 3)
  const checked = { code: 'a', tests: [{ stdin: '' }], compare: { checker: { language: 'cpp', code: 'c' } } }
  assert.equal(weight('POST /v1/judge', checked), 1, 'a judge is one call, its checker with it')
  assert.equal(weight('POST /v1/judge/batch', { requests: [checked, checked] }), 2)
  assert.equal(weight('POST /v1/sessions', undefined), 1, 'opening a session is one call')
  assert.equal(weight('POST /v1/sessions/:id/execute', { code: 'x' }), 1)
  assert.equal(weight('POST /run_code', { code: 'x', language: 'python' }), 1)
  assert.equal(weight('POST /run_jupyter', { cells: ['a', 'b'] }), 1, 'cells run one at a time in one session')
  assert.equal(weight('POST /run', sub), 1)
  assert.equal(weight('POST /judge/batch', { type: 'batch', submissions: [sub, sub] }), 2)
  assert.equal(weight('POST /run/long-batch', { type: 'batch', submissions: [sub, sub] }), 2)
  assert.equal(
    declared.get('POST /run/long-batch')?.held?.(100),
    64,
    'a long batch holds of admission the items it runs at once'
  )
  assert.equal(declared.get('POST /run/batch')?.held, undefined, 'a batch holds all its items')
  assert.equal(weight('POST /mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} }), 1)
  assert.equal(weight('POST /mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }), 0, 'listing tools runs nothing')
  assert.equal(weight('POST /mcp', [{ method: 'tools/call' }, { method: 'initialize' }, { method: 'tools/call' }]), 2)
  const runsCode = [
    'POST /judge',
    'POST /judge/batch',
    'POST /judge/long-batch',
    'POST /mcp',
    'POST /run',
    'POST /run/batch',
    'POST /run/long-batch',
    'POST /run_code',
    'POST /run_jupyter',
    'POST /v1/execute',
    'POST /v1/execute/batch',
    'POST /v1/judge',
    'POST /v1/judge/batch',
    'POST /v1/sessions',
    'POST /v1/sessions/:id/execute'
  ]
  assert.deepEqual(
    runsCode.filter((route) => !declared.has(route)),
    [],
    'every route of these APIs that runs code declares its calls'
  )
  // an API added later declares its own routes, and its own tests say which
  assert.deepEqual(
    [...declared.keys()].filter((route) => !route.startsWith('POST ')),
    [],
    'only POST routes run code'
  )
})

test('the calls an API declares are what the limits see: an MCP tool call that runs code, a code-judge submission as the request it becomes', async () => {
  const declared = await declaredCalls()
  const mcp = declared.get('POST /mcp') as RouteCalls
  assert.deepEqual(
    mcp.of([
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'run_python', arguments: { code: 'x', timeout_ms: 5 } }
      },
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'close_session', arguments: { session_id: 's' } }
      },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'judge', arguments: { code: 'j', tests: [] } } }
    ]),
    [
      { code: 'x', timeout_ms: 5 },
      {},
      { code: 'j', timeout_ms: undefined, memory_mb: undefined, compile_timeout_ms: undefined }
    ]
  )
  const cpp = { type: 'cpp', solution: 'int main(){}' }
  assert.deepEqual(
    (declared.get('POST /run') as RouteCalls).of(cpp),
    [{ code: 'int main(){}', timeout_ms: 10_000, memory_mb: 384, compile_timeout_ms: 10_000 }],
    'a cpp submission is held to the limits with its compile step'
  )
  const native = declared.get('POST /v1/judge') as RouteCalls
  assert.deepEqual(
    native.of({
      code: 'p',
      tests: [{ stdin: '' }],
      timeout_ms: 5,
      compile_timeout_ms: 6,
      memory_mb: 7,
      compare: { checker: { language: 'c', code: 'c' } }
    }),
    [{ code: 'p', timeout_ms: 5, compile_timeout_ms: 6, memory_mb: 7, checker_code: 'c' }],
    "a judge's program, its checker and its limits"
  )
  const judge = declared.get('POST /judge') as RouteCalls
  assert.deepEqual(judge.of({ type: 'python', solution: 'print(1)' }), [
    { language: 'python', code: 'print(1)', timeout_ms: 10_000, memory_mb: 384 }
  ])
})

test('an API is its folder: no module of the gateway outside apis/ names a route of a compatible API', async () => {
  const src = fileURLToPath(new URL('../../src/', import.meta.url))
  const paths = [...(await declaredCalls()).keys()]
    .map((route) => route.split(' ')[1] as string)
    .filter((path) => !path.startsWith('/v1/'))
  const outside = (readdirSync(src, { recursive: true }) as string[]).filter(
    (file) => file.endsWith('.ts') && !file.startsWith('apis')
  )
  assert.ok(outside.length > 10 && paths.length > 5)
  for (const file of outside) {
    const text = readFileSync(join(src, file), 'utf8')
    for (const path of paths) {
      // the path as a string of its own, or the start of a longer one of the API's ('/run/batch')
      const named = new RegExp(`['"\`]${path.replace(/[/]/g, '\\/')}(['"\`/])`)
      assert.ok(!named.test(text), `${relative(src, join(src, file))} names ${path}`)
    }
  }
})
