/**
 * The deadline of a queued call, end to end: a gateway over real HTTP in front of a real
 * process-backend runner (bubblewrap, Python) with one sandbox, so a call waits in the runner's
 * queue while another runs. The gateway's grace is small (800 ms, over the runner's 100 ms of
 * grace and its backend's 500 ms stop, which the gateway checks it covers) so that the flaw this
 * guards against shows in a second, not after 5 s: a wait longer than timeout_ms + grace used to
 * be answered `infra_error` (the gateway's HTTP timeout) instead of the runner's answer.
 *
 * What the user must see: a call that waited past its queue budget is `queue_timeout` with its
 * `queue_ms`; a call that waited less runs and is `ok`; a batch gets results for the items that
 * could start and `queue_timeout` for the tail, in order, streamed or not. Also through the
 * in-process runner of `sandfleet serve`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { InProcessRunnerClient, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { Runner, runnerConfig, silentLogger } from '@sandfleet/runner'
import type { ExecResult } from '@sandfleet/protocol'
import { post, startFleet } from './helpers/fleet.ts'

const GRACE = { callGraceMs: 800 }
const RUNNER = { poolSize: 1, queueTimeoutMs: 60_000, graceMs: 100 }

/** A job holding the only sandbox for `seconds`. */
const hold = (seconds: number, out = 'held'): object => ({
  code: `import time; time.sleep(${seconds}); print(${JSON.stringify(out)})`,
  timeout_ms: 3000
})

/** Resolves once `busy()` is true (the holding job started), so the next call really queues. */
async function until(busy: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !busy(); i++) await sleep(10)
  assert.ok(busy(), 'the holding job started')
}

test("a call that waits in the runner's queue past its budget is answered queue_timeout with its queue_ms, not infra_error", async () => {
  const fleet = await startFleet([`qd-late-${process.pid}`], RUNNER, { ...GRACE, queueTimeoutMs: 600 })
  try {
    const holder = post(`${fleet.url}/v1/execute`, hold(2.5))
    await until(() => fleet.runners[0].runner.load().busy === 1)
    const { status, body } = await post(`${fleet.url}/v1/execute`, {
      code: 'print("never")',
      timeout_ms: 1000,
      request_id: 'late'
    })
    assert.equal(status, 200)
    assert.deepEqual(
      [body.status, body.error?.type, body.request_id, body.stdout],
      ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'late', '']
    )
    assert.ok(
      body.queue_ms >= 500 && body.queue_ms < 2000,
      `queue_ms ${body.queue_ms}: waited its budget (600 ms), not until the sandbox freed`
    )
    const held = (await holder).body
    assert.deepEqual([held.status, held.stdout], ['ok', 'held\n'])
  } finally {
    await fleet.close()
  }
})

test('a call that waits longer than timeout_ms + grace but within its budget runs and is ok', async () => {
  const fleet = await startFleet([`qd-wait-${process.pid}`], RUNNER, { ...GRACE, queueTimeoutMs: 10_000 })
  try {
    const holder = post(`${fleet.url}/v1/execute`, hold(1.5))
    await until(() => fleet.runners[0].runner.load().busy === 1)
    // waits ~1.5 s for the sandbox: more than its own 200 ms + the gateway's 800 ms of grace
    const { body } = await post(`${fleet.url}/v1/execute`, { code: 'print("waited")', timeout_ms: 200 })
    assert.deepEqual([body.status, body.stdout], ['ok', 'waited\n'], JSON.stringify(body.error))
    assert.ok(body.queue_ms >= 700, `queue_ms ${body.queue_ms}`)
    assert.equal((await holder).body.status, 'ok')
  } finally {
    await fleet.close()
  }
})

test('a batch whose tail cannot start within the budget gets results for the head and queue_timeout for the tail, in order, as JSON and as NDJSON', async () => {
  // One sandbox; items 0 and 1 hold it 1.5 s each, so item 1 starts at ~1.5 s and items 2, 3
  // could start only at ~3 s: past the 2.2 s budget. Every item's timeout_ms + grace is 2.8 s.
  const fleet = await startFleet([`qd-batch-${process.pid}`], RUNNER, { ...GRACE, queueTimeoutMs: 2200 })
  const requests = [
    { code: 'import time; time.sleep(1.5); print("a")', timeout_ms: 2000 },
    { code: 'import time; time.sleep(1.5); print("b")', timeout_ms: 2000 },
    { code: 'print("c")', timeout_ms: 2000 },
    { code: 'print("d")', timeout_ms: 2000 }
  ]
  const expectOrder = (results: ExecResult[]): void => {
    assert.deepEqual(
      results.map((r) => r.status),
      ['ok', 'ok', 'queue_timeout', 'queue_timeout'],
      JSON.stringify(results.map((r) => r.error))
    )
    assert.deepEqual(
      results.map((r) => r.stdout),
      ['a\n', 'b\n', '', '']
    )
    for (const r of results.slice(2)) assert.equal(r.error?.type, 'SF_ERR_RUNNER_QUEUE_TIMEOUT')
  }
  try {
    const { status, body } = await post(`${fleet.url}/v1/execute/batch`, { requests })
    assert.equal(status, 200)
    expectOrder(body.results)

    const res = await fetch(`${fleet.url}/v1/execute/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
      body: JSON.stringify({ requests })
    })
    assert.equal(res.status, 200)
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { index: number; result: ExecResult })
    assert.deepEqual(
      lines.map((l) => l.index),
      [0, 2, 3, 1],
      "the tail's queue_timeout streams at the budget, before item 1 finishes"
    )
    const byIndex = new Array<ExecResult>(requests.length)
    for (const l of lines) byIndex[l.index] = l.result
    expectOrder(byIndex)
  } finally {
    await fleet.close()
  }
})

test("sandfleet serve (in-process runner): the gateway's queue budget is the job's, not the runner's longer one", async () => {
  const runner = new Runner(
    runnerConfig({ backend: 'process', poolSize: 1, queueTimeoutMs: 60_000, id: `qd-serve-${process.pid}` }),
    { logger: silentLogger }
  )
  await runner.start()
  try {
    const config = loadGatewayConfig({ env: {}, values: { host: '127.0.0.1', port: 0, queueTimeoutMs: 600 } })
    const gateway = await startGateway({ config, logger: false, clients: [new InProcessRunnerClient(runner)] })
    try {
      const holder = post(`${gateway.url}/v1/execute`, hold(2.5))
      await until(() => runner.load().busy === 1)
      const { body } = await post(`${gateway.url}/v1/execute/batch`, {
        requests: [{ code: 'print(1)' }, { code: 'print(2)' }]
      })
      assert.deepEqual(
        body.results.map((r: ExecResult) => r.status),
        ['queue_timeout', 'queue_timeout']
      )
      assert.ok(
        body.results.every((r: ExecResult) => r.queue_ms < 2000),
        'answered at the budget, not when the sandbox freed'
      )
      assert.equal((await holder).body.status, 'ok')
    } finally {
      await gateway.close()
    }
  } finally {
    await runner.close()
  }
})
