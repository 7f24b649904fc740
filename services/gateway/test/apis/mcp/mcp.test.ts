import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import Fastify, { type FastifyInstance } from 'fastify'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { LIMITS, failedResult, type ExecResult } from '@sandfleet/protocol'
import { mcpCompat } from '../../../src/apis/mcp/mcp.ts'
import type { CompatSessions } from '../../../src/apis/compat.ts'
import { runPython } from '../helpers.ts'
import { localJudge } from '../../helpers/local-judge.ts'

/** Sessions that keep each session's cells and replay them (enough to show state across calls). */
function replaySessions(): CompatSessions {
  const cells = new Map<string, string[]>()
  let n = 0
  return {
    async create() {
      const id = `s${++n}`
      cells.set(id, [])
      return id
    },
    async execute(id, cell) {
      const past = cells.get(id)
      // as the gateway's sessions refuse an id they no longer hold: a RunnerRefusal's 404 ErrorBody
      if (past === undefined)
        throw Object.assign(new Error('no such session'), {
          statusCode: 404,
          body: { status: 'invalid_request', error: { code: 'SF_ERR_SESSION_NOT_FOUND', message: `no session ${id}` } }
        })
      const silent = past
        .map(
          (c) =>
            `import contextlib, io\nwith contextlib.redirect_stdout(io.StringIO()):\n${c
              .split('\n')
              .map((l) => '    ' + l)
              .join('\n')}`
        )
        .join('\n')
      const result = await runPython({ code: `${silent}\n${cell.code}`, timeout_ms: cell.timeout_ms })
      if (result.status === 'ok') past.push(cell.code)
      return result
    },
    async close(id) {
      cells.delete(id)
    }
  }
}

let app: FastifyInstance
let client: Client
before(async () => {
  app = Fastify()
  const execute = async (req: Parameters<typeof runPython>[0]): Promise<ExecResult> =>
    req.language === 'javascript'
      ? { ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout: 'js\n', cpu_ms: 0.25 }
      : await runPython(req)
  await app.register(mcpCompat, { execute, judge: localJudge, sessions: replaySessions() })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  client = new Client({ name: 'sandfleet-test', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${address}/mcp`)))
})
after(async () => {
  await client?.close()
  await app.close()
})

test('the SDK client lists the six tools over real HTTP', async () => {
  const { tools } = await client.listTools()
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'close_session',
    'create_session',
    'judge',
    'run_in_session',
    'run_javascript',
    'run_python'
  ])
  const py = tools.find((t) => t.name === 'run_python')
  assert.ok(py?.inputSchema.properties?.code !== undefined)
})

test('run_python returns status, stdout and stderr', async () => {
  const res = await client.callTool({
    name: 'run_python',
    arguments: { code: 'import sys; print(6*7); print("warn", file=sys.stderr)' }
  })
  const s = res.structuredContent as Record<string, unknown>
  assert.equal(s.status, 'ok')
  assert.equal(s.stdout, '42\n')
  assert.equal(s.stderr, 'warn\n')
  assert.notEqual(res.isError, true)
  assert.match((res.content as Array<{ text: string }>)[0]?.text ?? '', /42/)
})

test('a raising program is an error result carrying the traceback', async () => {
  const res = await client.callTool({ name: 'run_python', arguments: { code: '1/0' } })
  assert.equal(res.isError, true)
  const s = res.structuredContent as Record<string, any>
  assert.equal(s.status, 'error')
  assert.match(s.stderr, /ZeroDivisionError/)
})

test("run_javascript reaches the javascript language; the structured content carries the job's cpu_ms when the result has one", async () => {
  const res = await client.callTool({ name: 'run_javascript', arguments: { code: 'console.log("js")' } })
  assert.deepEqual([(res.structuredContent as any).stdout, (res.structuredContent as any).cpu_ms], ['js\n', 0.25])
  const py = await client.callTool({ name: 'run_python', arguments: { code: 'print(1)' } })
  assert.equal('cpu_ms' in (py.structuredContent as object), false, 'none when the result has none')
})

test('session tools keep state across calls and close', async () => {
  const created = await client.callTool({ name: 'create_session', arguments: {} })
  const id = (created.structuredContent as any).session_id as string
  assert.equal(typeof id, 'string')
  await client.callTool({ name: 'run_in_session', arguments: { session_id: id, code: 'x = 41' } })
  const res = await client.callTool({ name: 'run_in_session', arguments: { session_id: id, code: 'x += 1\nprint(x)' } })
  assert.equal((res.structuredContent as any).stdout, '42\n')
  const closed = await client.callTool({ name: 'close_session', arguments: { session_id: id } })
  assert.equal((closed.structuredContent as any).status, 'ok')
  const gone = await client.callTool({ name: 'run_in_session', arguments: { session_id: id, code: 'print(x)' } })
  assert.equal(gone.isError, true)
  assert.equal(
    (gone.structuredContent as any).status,
    'invalid_request',
    "a closed session is the request's fault, not the fleet's"
  )
  assert.match(
    (gone.content as Array<{ text: string }>)[0]?.text ?? '',
    /SF_ERR_SESSION_NOT_FOUND: no session s1 \(the session is closed, expired or unknown/
  )
})

test('bad tool arguments are refused, nothing runs', async () => {
  const res = await client
    .callTool({ name: 'run_python', arguments: { code: 42 } })
    .catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }))
  assert.equal(res.isError, true)
})

test('GET /mcp answers 405: the server is stateless', async () => {
  const res = await app.inject({ method: 'GET', url: '/mcp' })
  assert.equal(res.statusCode, 405)
})

test("a tool call without timeout_ms gets the default within the gateway's largest (stateless and in a session)", async () => {
  const seen: Array<[string, number | undefined]> = []
  const ok = (): ExecResult => ({ ...failedResult('ok', '', ''), error: null, exit_code: 0 })
  const sessions: CompatSessions = {
    async create() {
      return 's1'
    },
    async execute(_id, cell) {
      seen.push(['run_in_session', cell.timeout_ms])
      return ok()
    },
    async close() {}
  }
  const small = Fastify()
  const tight = new Client({ name: 'sandfleet-test', version: '0.0.0' })
  try {
    await small.register(mcpCompat, {
      execute: async (req) => {
        seen.push([`run_${req.language ?? 'python'}`, req.timeout_ms])
        return ok()
      },
      sessions,
      limits: { maxTimeoutMs: 3000 }
    })
    await tight.connect(
      new StreamableHTTPClientTransport(new URL(`${await small.listen({ host: '127.0.0.1', port: 0 })}/mcp`))
    )
    const { tools } = await tight.listTools()
    for (const name of ['run_python', 'run_javascript', 'run_in_session']) {
      const described = (
        tools.find((t) => t.name === name)?.inputSchema.properties?.timeout_ms as { description?: string } | undefined
      )?.description
      assert.match(described ?? '', /default 3000, at most 3000/, name)
    }
    await tight.callTool({ name: 'run_python', arguments: { code: 'pass' } })
    await tight.callTool({ name: 'run_javascript', arguments: { code: '1' } })
    await tight.callTool({ name: 'run_in_session', arguments: { session_id: 's1', code: 'pass' } })
    await tight.callTool({ name: 'run_python', arguments: { code: 'pass', timeout_ms: 1500 } })
    assert.deepEqual(seen, [
      ['run_python', 3000],
      ['run_javascript', 3000],
      ['run_in_session', 3000],
      ['run_python', 1500]
    ])
  } finally {
    await tight.close()
    await small.close()
  }
  // with the gateway's default largest, the protocol's default
  const wide = Fastify()
  const client2 = new Client({ name: 'sandfleet-test', version: '0.0.0' })
  try {
    seen.length = 0
    await wide.register(mcpCompat, {
      execute: async (req) => {
        seen.push(['run_python', req.timeout_ms])
        return ok()
      },
      sessions
    })
    await client2.connect(
      new StreamableHTTPClientTransport(new URL(`${await wide.listen({ host: '127.0.0.1', port: 0 })}/mcp`))
    )
    await client2.callTool({ name: 'run_python', arguments: { code: 'pass' } })
    await client2.callTool({ name: 'run_in_session', arguments: { session_id: 's1', code: 'pass' } })
    assert.deepEqual(seen, [
      ['run_python', LIMITS.defaultTimeoutMs],
      ['run_in_session', LIMITS.defaultTimeoutMs]
    ])
  } finally {
    await client2.close()
    await wide.close()
  }
})

test('judge answers the verdict, tests passed of total and the first failing test; only a refusal is an error', async () => {
  const tests = [
    { stdin: '1 2\n', expected: '3\n' },
    { stdin: '2 2\n', expected: '5\n' },
    { stdin: '3 3\n', expected: '6\n' }
  ]
  const cpp = '#include <iostream>\nint main(){int a,b;std::cin>>a>>b;std::cout<<a+b<<"\\n";}'
  const wrong = await client.callTool({ name: 'judge', arguments: { language: 'cpp', code: cpp, tests } })
  const s = wrong.structuredContent as any
  assert.deepEqual([s.verdict, s.passed, s.total, s.compile.status], ['wrong_answer', 1, 3, 'ok'])
  assert.deepEqual(
    s.tests.map((t: any) => t.verdict),
    ['accepted', 'wrong_answer', 'skipped']
  )
  assert.equal(wrong.isError, false, "a verdict on the program is the tool's answer, not its failure")
  assert.match(
    (wrong.content as any)[0].text,
    /verdict: wrong_answer \(1\/3 tests passed\)\ntest 2: wrong_answer\nstdout:\n4/
  )
  const all = await client.callTool({
    name: 'judge',
    arguments: { code: 'a, b = map(int, input().split())\nprint(a + b)', tests, run_all: true }
  })
  assert.deepEqual([(all.structuredContent as any).verdict, (all.structuredContent as any).passed], ['wrong_answer', 2])
  const broken = await client.callTool({ name: 'judge', arguments: { language: 'c', code: 'int main( {', tests } })
  assert.equal((broken.structuredContent as any).verdict, 'compile_error')
  assert.match((broken.content as any)[0].text, /compile: error\n.*error/s)
  const refused = await client.callTool({
    name: 'judge',
    arguments: { language: 'javascript', code: 'print(1)', tests: [{ stdin: '' }] }
  })
  assert.equal(refused.isError, true, 'a language the fleet does not judge is refused')
  assert.match((refused.content as any)[0].text, /error: SF_ERR_RUNNER_LANGUAGE: language/)
})
