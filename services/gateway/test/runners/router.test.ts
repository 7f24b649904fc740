/**
 * The gateway's deadline towards runners, over real HTTP to small fake runners (node:http on
 * 127.0.0.1) whose answers come when the test says: the queue budget each attempt hands the
 * runner, the HTTP timeout derived from it, and retries that only use what is left.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { startGateway, loadGatewayConfig, type RunningGateway } from '@sandfleet/gateway'
import { failedResult, RUNNER_HEADERS, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'

/** A fake runner: answers each execute with `answer` after `delayMs`, and records the queue budget it was given. */
interface FakeRunner {
  url: string
  /** `x-sandfleet-queue-timeout-ms` of each execute, in order of arrival. */
  budgets: Array<string | undefined>
  /** The tenant and request id headers of each execute, in order of arrival. */
  contexts: Array<{ tenant: unknown; requestId: unknown }>
  close(): Promise<void>
}

async function fakeRunner(
  id: string,
  inFlight: number,
  delayMs: number,
  answer: () => ExecResult
): Promise<FakeRunner> {
  const budgets: Array<string | undefined> = []
  const contexts: FakeRunner['contexts'] = []
  const load: RunnerLoad = {
    runner: id,
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 10,
    in_flight: inFlight,
    queued: 0,
    queue_limit: 100,
    warm: 10 - inFlight,
    busy: inFlight,
    sessions: 0
  }
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => {
      body += chunk
    })
    req.on('end', () => {
      const send = (data: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(data))
      }
      if (req.url === '/v1/runner/load') {
        send(load)
        return
      }
      const budget = req.headers[RUNNER_HEADERS.queueTimeoutMs]
      budgets.push(typeof budget === 'string' ? budget : undefined)
      contexts.push({ tenant: req.headers[RUNNER_HEADERS.tenant], requestId: req.headers[RUNNER_HEADERS.requestId] })
      const items = req.url === '/v1/execute/batch' ? (JSON.parse(body) as { requests: unknown[] }).requests.length : 0
      void sleep(delayMs).then(() => {
        if (res.destroyed) return
        if (req.url === '/v1/execute/batch')
          send({ results: Array.from({ length: items }, () => ({ ...answer(), runner: id })) })
        else send({ ...answer(), runner: id })
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    budgets,
    contexts,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve()
        })
      )
    }
  }
}

const ok = (): ExecResult => ({ ...failedResult('ok', 'x', ''), error: null, exit_code: 0, stdout: 'ran\n' })
const infraError = (): ExecResult => failedResult('infra_error', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'the sandbox died')

/** Runs `fn` against a gateway in front of `runners`, then closes the gateway and the runners, whatever happened. */
async function withGateway(
  runners: FakeRunner[],
  values: Record<string, unknown>,
  fn: (gateway: RunningGateway) => Promise<void>
): Promise<void> {
  try {
    const config = loadGatewayConfig({
      env: {},
      values: { host: '127.0.0.1', port: 0, runners: runners.map((r) => r.url), loadPollMs: 60_000, ...values }
    })
    const gateway = await startGateway({ config, logger: false })
    try {
      await fn(gateway)
    } finally {
      await gateway.close()
    }
  } finally {
    await Promise.all(
      runners.map(async (r) => {
        await r.close()
      })
    )
  }
}

async function execute(gateway: RunningGateway, body: object): Promise<ExecResult> {
  const res = await fetch(`${gateway.url}/v1/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  assert.equal(res.status, 200)
  return (await res.json()) as ExecResult
}

test("router: the runner's queue_timeout arrives even when it comes long after timeout_ms + grace", async () => {
  // The runner answers at the end of the budget it was given, as a runner whose queue is full does.
  const slow = await fakeRunner('slow', 0, 1500, () =>
    failedResult('queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'waited 1500 ms', { queue_ms: 1500 })
  )
  await withGateway([slow], { queueTimeoutMs: 1500, callGraceMs: 500 }, async (gateway) => {
    const result = await execute(gateway, { code: 'print(1)', timeout_ms: 50 })
    assert.deepEqual(
      [result.status, result.error?.type, result.queue_ms],
      ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 1500]
    )
    // the whole budget, less what the gateway spent before the attempt (milliseconds; more on a loaded machine)
    const told = Number(slow.budgets[0])
    assert.ok(
      slow.budgets.length === 1 && told > 1300 && told <= 1500,
      `budget told to the runner: ${slow.budgets.join(', ')}`
    )
  })
})

test("router: a retry on another runner is given only what is left of the call's queue budget", async () => {
  const failing = await fakeRunner('failing', 0, 400, infraError)
  const healthy = await fakeRunner('healthy', 5, 0, ok) // busier: tried second
  await withGateway([failing, healthy], { queueTimeoutMs: 3000, callGraceMs: 1000 }, async (gateway) => {
    const result = await execute(gateway, { code: 'print(1)', timeout_ms: 50 })
    assert.deepEqual([result.status, result.runner], ['ok', 'healthy'])
    const first = Number(failing.budgets[0])
    assert.ok(
      failing.budgets.length === 1 && first > 2800 && first <= 3000,
      `the first attempt was given ${failing.budgets.join(', ')}`
    )
    const left = Number(healthy.budgets[0])
    assert.ok(
      left > 0 && left <= 2600,
      `the retry was given ${left} ms of a 3000 ms budget after 400 ms on the first runner`
    )
  })
})

test("router: every attempt of a call carries its request's one context: the tenant of its key and the gateway's request id", async () => {
  const failing = await fakeRunner('failing', 0, 0, infraError)
  const healthy = await fakeRunner('healthy', 5, 0, ok) // busier: tried second
  const key = 'key-of-team-a-0123'
  await withGateway([failing, healthy], { apiKeys: [key] }, async (gateway) => {
    const send = async (): Promise<ExecResult> => {
      const res = await fetch(`${gateway.url}/v1/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ code: 'print(1)' })
      })
      assert.equal(res.status, 200)
      return (await res.json()) as ExecResult
    }
    assert.equal((await send()).runner, 'healthy')
    assert.equal((await send()).runner, 'healthy')
    const sent = [...failing.contexts, ...healthy.contexts]
    assert.equal(sent.length, 4, 'two attempts a call')
    assert.ok(
      sent.every((c) => c.tenant === 'key-1' && typeof c.requestId === 'string' && c.requestId !== ''),
      JSON.stringify(sent)
    )
    assert.equal(failing.contexts[0].requestId, healthy.contexts[0].requestId, "a retry is the same request's")
    assert.notEqual(healthy.contexts[0].requestId, healthy.contexts[1].requestId, 'each request its own id')
  })
})

test("router: a queue_timeout that came before the call's queue budget was spent (the runner's own cap is shorter) is tried on another runner", async () => {
  const capped = await fakeRunner('capped', 0, 300, () =>
    failedResult('queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'waited 300 ms', { queue_ms: 300 })
  )
  const healthy = await fakeRunner('healthy', 5, 0, ok) // busier: tried second
  await withGateway([capped, healthy], { queueTimeoutMs: 3000, callGraceMs: 1000 }, async (gateway) => {
    const result = await execute(gateway, { code: 'print(1)', timeout_ms: 50 })
    assert.deepEqual([result.status, result.runner], ['ok', 'healthy'])
    const left = Number(healthy.budgets[0])
    assert.ok(
      capped.budgets.length === 1 && left > 0 && left <= 2700,
      `the retry was given ${left} ms of a 3000 ms budget after 300 ms on the first runner`
    )
  })
})

test("router: a call whose queue budget is spent is not retried: the runner's answer stands", async () => {
  const failing = await fakeRunner('failing', 0, 500, infraError)
  const healthy = await fakeRunner('healthy', 5, 0, ok)
  await withGateway([failing, healthy], { queueTimeoutMs: 300, callGraceMs: 1000 }, async (gateway) => {
    const result = await execute(gateway, { code: 'print(1)', timeout_ms: 300 })
    assert.deepEqual(
      [result.status, result.error?.type, result.runner],
      ['infra_error', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'failing']
    )
    assert.deepEqual(healthy.budgets, [], 'no attempt without time to wait for a sandbox')
  })
})

test("router: a batch's sub-batches carry the batch's queue budget", async () => {
  const runner = await fakeRunner('r', 0, 0, ok)
  await withGateway([runner], { queueTimeoutMs: 1234 }, async (gateway) => {
    const res = await fetch(`${gateway.url}/v1/execute/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [{ code: 'a' }, { code: 'b' }] })
    })
    assert.equal(res.status, 200)
    assert.deepEqual(
      ((await res.json()) as { results: ExecResult[] }).results.map((r) => r.status),
      ['ok', 'ok']
    )
    const left = Number(runner.budgets[0])
    assert.ok(left > 1000 && left <= 1234, `budget sent: ${runner.budgets[0]}`)
  })
})

test('router: a runner that answered it drains gets no more calls until its load report says otherwise', async () => {
  const draining = (): ExecResult => failedResult('infra_error', 'SF_ERR_RUNNER_DRAINING', 'the runner is draining')
  // the draining runner reports less load, so by load alone it would be picked first every time
  const runners = [await fakeRunner('r-draining', 0, 0, draining), await fakeRunner('r-busy', 5, 0, ok)]
  await withGateway(runners, {}, async (gateway) => {
    for (let i = 0; i < 5; i++) assert.deepEqual([(await execute(gateway, { code: 'x' })).runner], ['r-busy'])
    assert.equal(runners[0].budgets.length, 1, 'asked once, then left alone')
  })
})
