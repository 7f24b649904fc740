/**
 * The compatible APIs on a real gateway in front of a real runner (process backend): requests
 * shaped as verl/SkyRL (SandboxFusion), rStar2-Agent (code-judge) and MCP clients send them run
 * real code through the same admitted, routed path as /v1/execute, sessions included.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { call, post, startFleet, type TestFleet } from './helpers/fleet.ts'

let fleet: TestFleet
// code-judge's time limit shortened, so its timeout test takes 3 s, not 10
before(async () => {
  fleet = await startFleet(['compat-a'], {}, { codeJudgeTimeoutMs: 3000 })
})
after(async () => {
  await fleet?.close()
})

test('SandboxFusion /run_code: a verl-shaped request runs for real; a timeout is TimeLimitExceeded', async () => {
  const ok = await post(`${fleet.url}/run_code`, {
    code: 'print(int(input()) * 2)',
    language: 'python',
    run_timeout: 5,
    stdin: '21',
    compile_timeout: 10,
    memory_limit_MB: -1,
    files: {},
    fetch_files: []
  })
  assert.equal(ok.status, 200)
  assert.deepEqual(
    [ok.body.status, ok.body.run_result.status, ok.body.run_result.stdout, ok.body.compile_result],
    ['Success', 'Finished', '42\n', null]
  )
  const slow = await post(`${fleet.url}/run_code`, {
    code: 'import time; time.sleep(2)',
    language: 'python',
    run_timeout: 0.5
  })
  assert.deepEqual([slow.body.status, slow.body.run_result.status], ['Failed', 'TimeLimitExceeded'])
})

test('SandboxFusion /run_jupyter: 3 cells in one state, one result each', async () => {
  const res = await post(`${fleet.url}/run_jupyter`, {
    cells: ['x = 40', 'x + 2', 'print(x * 2)'],
    cell_timeout: 5,
    total_timeout: 20,
    kernel: 'python3'
  })
  assert.equal(res.body.status, 'Success', JSON.stringify(res.body))
  assert.equal(res.body.cells.length, 3)
  assert.deepEqual(res.body.cells[1].display, [{ 'text/plain': '42' }])
  assert.equal(res.body.cells[2].stdout, '80\n')
  assert.equal(fleet.runners[0].runner.sessions?.size, 0, 'the notebook session was closed')
})

test('SandboxFusion /run_jupyter: a matplotlib figure comes back as image/png, an HTML repr as text/html (sandboxed session)', async () => {
  const res = await post(`${fleet.url}/run_jupyter`, {
    cells: [
      'import matplotlib.pyplot as plt\nplt.plot([1, 4, 9])\nplt.show()\nplt.figure()\nplt.bar([1], [2])',
      'len(plt.get_fignums())',
      'class T:\n    def _repr_html_(self): return "<b>t</b>"\nT()'
    ],
    total_timeout: 120
  })
  assert.equal(res.body.status, 'Success', JSON.stringify(res.body).slice(0, 500))
  const images = res.body.cells[0].display.filter((d: any) => 'image/png' in d)
  assert.equal(images.length, 2, JSON.stringify(res.body.cells[0]).slice(0, 500))
  for (const image of images) {
    assert.equal(Buffer.from(image['image/png'], 'base64').subarray(1, 4).toString(), 'PNG')
    assert.match(image['text/plain'], /^<Figure size \d+x\d+ with 1 Axes>$/)
  }
  assert.equal(res.body.cells[0].stderr, '', 'plt.show() under Agg warns nothing')
  assert.deepEqual(res.body.cells[1].display, [{ 'text/plain': '0' }], 'shown figures are closed')
  assert.equal(res.body.cells[2].display[0]['text/html'], '<b>t</b>')
})

test("SandboxFusion's test_python_fetch_files, its request and assertions: a.txt and /mnt/b come back", async () => {
  const { status, body } = await post(`${fleet.url}/run_code`, {
    language: 'python',
    code: 'open("a.txt", "w").write("secret"); open("/mnt/b", "w").write("sauce");',
    run_timeout: 5,
    fetch_files: ['a.txt', '/mnt/b']
  })
  assert.equal(status, 200)
  assert.deepEqual([body.status, body.run_result.status], ['Success', 'Finished'], JSON.stringify(body))
  assert.equal(Buffer.from(body.files['a.txt'], 'base64').toString(), 'secret')
  assert.equal(Buffer.from(body.files['/mnt/b'], 'base64').toString(), 'sauce')
})

test("code-judge's test_python_timeout, its request and assertions: worker_timeout, and /run's stdout is its wrapper's line", async () => {
  for (const type of ['judge', 'run']) {
    const { status, body } = await post(`${fleet.url}/${type}`, {
      type: 'python',
      solution: 'from time import sleep\nsleep(10)',
      input: 'a',
      expected_output: 'a'
    })
    assert.equal(status, 200)
    assert.deepEqual(
      [body.success, body.run_success, body.reason],
      [false, false, 'worker_timeout'],
      JSON.stringify(body)
    )
    if (type === 'run') assert.equal(body.stdout.trim(), 'Suicide from timeout.')
  }
})

test('code-judge /run/batch and /judge run for real; /status reports the fleet', async () => {
  const batch = await post(`${fleet.url}/run/batch`, {
    type: 'batch',
    submissions: [
      { type: 'python', solution: 'print(int(input())+1)', input: '41' },
      { type: 'python', solution: 'import sys; sys.exit(2)', input: '' }
    ]
  })
  assert.deepEqual(
    batch.body.results.map((r: any) => [r.success, r.run_success, r.stdout, r.reason]),
    [
      [true, true, '42\n', ''],
      [false, false, '', '']
    ]
  )
  const judged = await post(`${fleet.url}/judge`, {
    type: 'python',
    solution: 'print(input())',
    input: 'a',
    expected_output: 'b'
  })
  assert.deepEqual([judged.body.success, judged.body.run_success], [false, true])
  // /status is the runners' last load reports: a report taken while these jobs waited says so
  // until the next one, so it is read until it shows the quiet fleet (a generous limit).
  let status = await call('GET', `${fleet.url}/status`)
  for (const end = Date.now() + 30_000; status.body.queue !== 0 && Date.now() < end;) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    status = await call('GET', `${fleet.url}/status`)
  }
  // the Python sandboxes only: the runner's JavaScript pool is no code-judge worker
  const load = fleet.runners[0].runner.load()
  assert.deepEqual(status.body, { queue: 0, num_workers: load.pools?.python?.capacity })
  const workers = Number(status.body.num_workers)
  assert.ok(workers >= 1 && workers < load.capacity, JSON.stringify(load))
})

test('MCP: the SDK client lists the tools and runs Python, statelessly and in a session', async () => {
  const client = new Client({ name: 'sandfleet-fleet-test', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${fleet.url}/mcp`)))
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name).sort()
    assert.deepEqual(tools, [
      'close_session',
      'create_session',
      'judge',
      'run_in_session',
      'run_javascript',
      'run_python'
    ])
    const run = (await client.callTool({ name: 'run_python', arguments: { code: 'print(6 * 7)' } })) as any
    assert.deepEqual([run.structuredContent.status, run.structuredContent.stdout], ['ok', '42\n'])
    const created = (await client.callTool({ name: 'create_session', arguments: {} })) as any
    const sid = created.structuredContent.session_id as string
    await client.callTool({ name: 'run_in_session', arguments: { session_id: sid, code: 'k = 5' } })
    const got = (await client.callTool({
      name: 'run_in_session',
      arguments: { session_id: sid, code: 'k * 2' }
    })) as any
    assert.deepEqual(got.structuredContent.display, [{ 'text/plain': '10' }])
    await client.callTool({ name: 'close_session', arguments: { session_id: sid } })
    // A session the caller closed is the request's fault, said so; not the fleet's (infra_error).
    const closed = (await client.callTool({ name: 'run_in_session', arguments: { session_id: sid, code: 'k' } })) as any
    assert.equal(closed.isError, true)
    assert.equal(closed.structuredContent.status, 'invalid_request', JSON.stringify(closed.structuredContent))
    assert.equal(closed.structuredContent.error.type, 'SF_ERR_SESSION_NOT_FOUND')
    assert.match(closed.content[0].text, /closed, expired or unknown; create_session opens a new one/)
  } finally {
    await client.close()
  }
})

test("MCP: the tools offer the gateway's own limits (timeout_ms up to its maxTimeoutMs), and what they offer is accepted", async () => {
  const client = new Client({ name: 'sandfleet-limits-test', version: '0.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${fleet.url}/mcp`)))
  try {
    const tools = (await client.listTools()).tools
    const max = 300_000 // the gateway's default maxTimeoutMs (the fleet of this file keeps it)
    for (const name of ['run_python', 'run_javascript', 'run_in_session']) {
      const schema = tools.find((t) => t.name === name)?.inputSchema as unknown as {
        properties: { timeout_ms: { maximum: number } }
      }
      assert.equal(schema.properties.timeout_ms.maximum, max, name)
    }
    const atMax = (await client.callTool({
      name: 'run_python',
      arguments: { code: 'print(1)', timeout_ms: max }
    })) as any
    assert.equal(atMax.structuredContent.status, 'ok', JSON.stringify(atMax.structuredContent))
    const past = (await client
      .callTool({ name: 'run_python', arguments: { code: 'print(1)', timeout_ms: max + 1 } })
      .catch((err: Error) => ({ isError: true, content: [{ text: err.message }] }))) as any
    assert.equal(past.isError, true)
    assert.match(JSON.stringify(past.content), /timeout_ms|300000|less than or equal/i)
  } finally {
    await client.close()
  }
})

test('a fleet fault reaches SandboxFusion callers as SandboxError, never as a user Failed', async () => {
  const lonely = await startFleet(['compat-gone'])
  try {
    await lonely.runners[0].close()
    const res = await post(`${lonely.url}/run_code`, { code: 'print(1)', language: 'python' })
    assert.equal(res.body.status, 'SandboxError', JSON.stringify(res.body))
  } finally {
    await lonely.close()
  }
})

test('MCP sessions belong to the API key that created them', async () => {
  const keyed = await startFleet(['compat-keys'], {}, { apiKeys: ['mcp-key-one', 'mcp-key-two'] })
  const connect = async (key: string): Promise<Client> => {
    const client = new Client({ name: 'sandfleet-key-test', version: '0.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${keyed.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } }
      })
    )
    return client
  }
  const one = await connect('mcp-key-one')
  const two = await connect('mcp-key-two')
  try {
    const created = (await one.callTool({ name: 'create_session', arguments: {} })) as any
    const sid = created.structuredContent.session_id as string
    await one.callTool({ name: 'run_in_session', arguments: { session_id: sid, code: 'secret = 7' } })
    const stolen = (await two.callTool({
      name: 'run_in_session',
      arguments: { session_id: sid, code: 'secret' }
    })) as any
    assert.equal(stolen.isError, true)
    assert.match(JSON.stringify(stolen.structuredContent), /SF_ERR_SESSION_NOT_FOUND/)
    const mine = (await one.callTool({ name: 'run_in_session', arguments: { session_id: sid, code: 'secret' } })) as any
    assert.deepEqual(mine.structuredContent.display, [{ 'text/plain': '7' }])
  } finally {
    await one.close()
    await two.close()
    await keyed.close()
  }
})
