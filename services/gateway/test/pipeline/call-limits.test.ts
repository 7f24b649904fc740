/**
 * A deployment's limits hold on every route: a call that gives no timeout gets one within
 * `maxTimeoutMs` (not the contract's 10 s default, which a smaller limit would refuse), and a call
 * over a limit is refused naming the field, on /v1 and through the compatible APIs' own fields,
 * by the pipeline's one limits stage (src/pipeline/call-limits.ts), before anything runs.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import type { ExecRequest } from '@sandfleet/protocol'
import { overLimit } from '../../src/pipeline/call-limits.ts'
import { echoRunner } from '../helpers/fake-runner.ts'

const LIMITS = { maxCodeBytes: 10, maxTimeoutMs: 3000, maxMemoryMb: 512, maxBatchItems: 2 }

test('overLimit: code in UTF-8 bytes, timeout_ms and memory_mb against the deployment, each naming its setting by its flag; a batch its item count', () => {
  assert.equal(
    overLimit([{ code: 'x'.repeat(10), timeout_ms: 3000, memory_mb: 512 }], LIMITS),
    undefined,
    'at each limit is within it'
  )
  assert.deepEqual(overLimit([{ code: 'a' }, { code: 'é'.repeat(6) }], LIMITS), {
    index: 1,
    field: 'code',
    message: "code is 12 bytes, over this deployment's limit of 10 bytes (maxCodeBytes, --max-code-bytes)"
  })
  assert.deepEqual(overLimit([{ timeout_ms: 3001 }], LIMITS), {
    index: 0,
    field: 'timeout_ms',
    message: "timeout_ms 3001 is over this deployment's limit of 3000 (maxTimeoutMs, --max-timeout-ms)"
  })
  assert.deepEqual(overLimit([{ memory_mb: 513 }], LIMITS), {
    index: 0,
    field: 'memory_mb',
    message: "memory_mb 513 is over this deployment's limit of 512 (maxMemoryMb, --max-memory-mb)"
  })
  assert.deepEqual(overLimit([{}, {}, {}], LIMITS, true), {
    index: undefined,
    field: 'requests',
    message: "requests has 3 items, over this deployment's limit of 2 (maxBatchItems, --max-batch-items)"
  })
  assert.equal(overLimit([{}, {}, {}], LIMITS), undefined, 'calls that are no batch are not counted')
  assert.equal(
    overLimit([{ code: 5 as unknown as string, timeout_ms: 'long' as unknown as number }], LIMITS),
    undefined,
    "a field not of its type is the parse stage's"
  )
})

test("overLimit: a judge's compile time limit and its checker's code are held as the program's are", () => {
  assert.deepEqual(overLimit([{ code: 'x', compile_timeout_ms: 3001 }], LIMITS), {
    index: 0,
    field: 'compile_timeout_ms',
    message: "compile_timeout_ms 3001 is over this deployment's limit of 3000 (maxTimeoutMs, --max-timeout-ms)"
  })
  assert.deepEqual(overLimit([{ code: 'x', checker_code: 'y'.repeat(11) }], LIMITS), {
    index: 0,
    field: 'compare/checker/code',
    message: "the checker is 11 bytes, over this deployment's limit of 10 bytes (maxCodeBytes, --max-code-bytes)"
  })
  assert.equal(overLimit([{ code: 'x', checker_code: 'y', compile_timeout_ms: 3000 }], LIMITS), undefined)
})

/** The echo runner, keeping the timeout of every call and cell it is given. */
function recordingRunner(): RunnerClient & { timeouts: Array<number | undefined> } {
  const echo = echoRunner('limits')
  const timeouts: Array<number | undefined> = []
  const sessions = echo.sessions
  return {
    ...echo,
    timeouts,
    execute: async (r: ExecRequest, context) => {
      timeouts.push(r.timeout_ms)
      return await echo.execute(r, context)
    },
    executeBatch: async (rs: ExecRequest[], on, context) => {
      timeouts.push(...rs.map((r) => r.timeout_ms))
      return await echo.executeBatch(rs, on, context)
    },
    sessions:
      sessions === undefined
        ? undefined
        : {
            ...sessions,
            execute: async (...args: Parameters<typeof sessions.execute>) => {
              timeouts.push(args[1].timeout_ms)
              return await sessions.execute(...args)
            }
          }
  }
}

test("a deployment's maxTimeoutMs and maxCodeBytes: defaults within them, larger values refused naming the field, on /v1 and the compatible APIs", async () => {
  const runner = recordingRunner()
  const config = loadGatewayConfig({ env: {}, values: { maxTimeoutMs: 3000, maxCodeBytes: 100 } })
  const { app } = await buildGatewayApp({ config, clients: [runner], logger: false })
  const post = async (url: string, payload: unknown): Promise<{ status: number; body: any }> => {
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
    assert.match(
      cell.body.message,
      /code is 101 bytes, over this deployment's limit of 100 bytes \(maxCodeBytes, --max-code-bytes\)/
    )
    // bytes, not characters: 50 two-byte characters are 100 bytes (within), 51 are 102 (over)
    assert.equal((await post('/run_code', { code: 'é'.repeat(50), language: 'python' })).body.status, 'Success')
    const wide = await post('/run_jupyter', { cells: ['é'.repeat(51)] })
    assert.match(wide.body.message, /code is 102 bytes, over this deployment's limit of 100 bytes/)
    assert.equal(runner.timeouts.length, 6, 'no refused call reached the runner')
    // the API document says the limits the pipeline holds calls to (its schemas check the contract's)
    const execRequest = (await app.inject({ url: '/openapi.json' })).json().components.schemas.ExecRequest
    assert.match(execRequest.properties.timeout_ms.description, /at most 3000 \(maxTimeoutMs\) on this deployment/)
    assert.equal(execRequest.properties.timeout_ms.default, 3000)
    assert.match(execRequest.properties.code.description, /at most 100 UTF-8 bytes \(maxCodeBytes\)/)
  } finally {
    await app.close()
  }
})

test('every API answers a call over a limit in its own shape, and nothing over one reaches a runner', async () => {
  const runner = recordingRunner()
  const config = loadGatewayConfig({ env: {}, values: { maxTimeoutMs: 3000, maxCodeBytes: 100, maxMemoryMb: 512 } })
  const { app } = await buildGatewayApp({ config, clients: [runner], logger: false })
  const mcpHeaders = { accept: 'application/json, text/event-stream' }
  const toolCall = (id: number, code: string, timeoutMs?: number): object => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'run_python', arguments: timeoutMs === undefined ? { code } : { code, timeout_ms: timeoutMs } }
  })
  try {
    await app.ready()
    // native: a 400 ErrorBody naming the field, the setting by its flag
    const memory = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'x', memory_mb: 513 } })
    assert.deepEqual([memory.statusCode, memory.json().error.field], [400, 'memory_mb'])
    assert.match(
      memory.json().error.message,
      /memory_mb 513 is over this deployment's limit of 512 \(maxMemoryMb, --max-memory-mb\)/
    )
    const created = await app.inject({ method: 'POST', url: '/v1/sessions', payload: { memory_mb: 1024 } })
    assert.deepEqual([created.statusCode, created.json().error.field], [400, 'memory_mb'])
    const session = (await app.inject({ method: 'POST', url: '/v1/sessions', payload: {} })).json().session_id as string
    const cell = await app.inject({
      method: 'POST',
      url: `/v1/sessions/${session}/execute`,
      payload: { code: 'x', timeout_ms: 4000 }
    })
    assert.deepEqual([cell.statusCode, cell.json().error.field], [400, 'timeout_ms'])

    // MCP: the tool call over a limit is a tool result marked isError, naming the field
    const single = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: mcpHeaders,
      payload: toolCall(1, 'print(1)', 3001)
    })
    assert.equal(single.statusCode, 200)
    assert.equal(single.json().id, 1)
    assert.equal(single.json().result.isError, true)
    assert.equal(single.json().result.structuredContent.status, 'invalid_request')
    assert.match(
      single.json().result.content[0].text,
      /timeout_ms 3001 is over this deployment's limit of 3000 \(maxTimeoutMs, --max-timeout-ms\)/
    )
    // in a JSON-RPC batch, the other requests are answered as not run
    const batch = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: mcpHeaders,
      payload: [toolCall(2, 'print(2)'), toolCall(3, 'x'.repeat(101))]
    })
    const [other, over] = batch.json() as Array<{
      id: number
      result?: { isError: boolean; content: Array<{ text: string }> }
      error?: { message: string }
    }>
    assert.deepEqual([other?.id, over?.id], [2, 3])
    assert.match(other?.error?.message ?? '', /^not run/)
    assert.equal(over?.result?.isError, true)
    assert.match(over?.result?.content[0]?.text ?? '', /code is 101 bytes/)

    // code-judge: invalid_input, unrun; in a batch the others say they were not run
    const sub = { type: 'python', solution: 'x'.repeat(101) }
    const run = (await app.inject({ method: 'POST', url: '/run', payload: sub })).json()
    assert.deepEqual([run.run_success, run.reason], [false, 'invalid_input'])
    assert.match(run.stderr, /code is 101 bytes/)
    const judged = (
      await app.inject({
        method: 'POST',
        url: '/judge/batch',
        payload: { type: 'batch', submissions: [{ type: 'python', solution: 'print(1)' }, sub] }
      })
    ).json()
    assert.deepEqual(
      judged.results.map((r: { reason: string }) => r.reason),
      ['invalid_input', 'invalid_input']
    )
    assert.equal(runner.timeouts.length, 0, 'no call over a limit, nor one of its batch, reached the runner')
  } finally {
    await app.close()
  }
})

test("a file a sandbox could not decode is the caller's mistake on every API that carries files, and reaches no runner", async () => {
  const runner = recordingRunner()
  const config = loadGatewayConfig({ env: {}, values: {} })
  const { app } = await buildGatewayApp({ config, clients: [runner], logger: false })
  const post = async (url: string, payload: unknown): Promise<{ status: number; body: any }> => {
    const res = await app.inject({ method: 'POST', url, payload: payload as object })
    return { status: res.statusCode, body: res.json() }
  }
  const text = { 'a.txt': 'hello world!' } // a new user's first try: text where base64 goes
  try {
    await app.ready()
    const one = await post('/v1/execute', { code: 'x', files: text })
    assert.deepEqual(
      [one.status, one.body.status, one.body.error.code, one.body.error.field],
      [400, 'invalid_request', 'SF_ERR_GATEWAY_INVALID_REQUEST', 'files/a.txt']
    )
    assert.match(one.body.error.message, /the content of "a\.txt" is not base64/)
    const outside = await post('/v1/execute', { code: 'x', files: { '/etc/cron.d/x': 'eA==' } })
    assert.deepEqual([outside.status, outside.body.error.field], [400, 'files//etc/cron.d/x'])
    const batch = await post('/v1/execute/batch', { requests: [{ code: 'x' }, { code: 'y', files: text }] })
    assert.deepEqual([batch.status, batch.body.error.field], [400, 'requests/1/files/a.txt'])
    const session = (await post('/v1/sessions', {})).body.session_id as string
    const cell = await post(`/v1/sessions/${session}/execute`, { code: 'x', files: text })
    assert.deepEqual([cell.status, cell.body.error.field], [400, 'files/a.txt'])

    for (const url of ['/run_code', '/run_jupyter']) {
      const sf = await post(
        url,
        url === '/run_code' ? { code: 'x', language: 'python', files: text } : { cells: ['x'], files: text }
      )
      assert.equal(sf.status, 422, `${url} ${JSON.stringify(sf.body)}`)
      assert.deepEqual([sf.body.detail[0].loc, sf.body.detail[0].input], [['body', 'files'], 'a.txt'])
      assert.match(sf.body.detail[0].msg, /is not base64/)
    }
    const piston = await post('/api/v2/execute', {
      language: 'python',
      version: '*',
      files: [{ content: 'print(1)' }, { name: 'data.bin', content: 'hello world!', encoding: 'base64' }]
    })
    assert.equal(piston.status, 400)
    assert.match(piston.body.message, /^files\[1\]\.content is not base64/)
    assert.equal(runner.timeouts.length, 0, 'nothing ran')
  } finally {
    await app.close()
  }
})
