/**
 * The whole path over real HTTP: a gateway in front of two runners with real sandboxes
 * (bubblewrap, Python). Calls spread over both runners; when one runner goes away in the middle
 * of a run, every call is still answered correctly by the other; a user error is never retried.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { post, startFleet } from './helpers/fleet.ts'

test('a gateway spreads calls over two runners and each answer is the right one', async () => {
  const fleet = await startFleet(['fleet-a', 'fleet-b'])
  try {
    const results = await Promise.all(
      Array.from(
        { length: 40 },
        async (_, i) => await post(`${fleet.url}/v1/execute`, { code: `print(${i} ** 2)`, request_id: `c${i}` })
      )
    )
    results.forEach(({ status, body }, i) => {
      assert.equal(status, 200)
      assert.deepEqual([body.status, body.stdout, body.request_id], ['ok', `${i * i}\n`, `c${i}`])
    })
    const served = new Set(results.map((r) => r.body.runner))
    assert.deepEqual([...served].sort(), ['fleet-a', 'fleet-b'], 'both runners served calls')
  } finally {
    await fleet.close()
  }
})

test('a runner that goes away mid-run loses no call: the other runner answers them all', async () => {
  const fleet = await startFleet(['fleet-c', 'fleet-d'])
  try {
    const calls = Array.from({ length: 40 }, async (_, i) => {
      if (i === 10) await fleet.runners[0].close()
      return await post(`${fleet.url}/v1/execute`, { code: `import time; time.sleep(0.01); print(${i})` })
    })
    const results = await Promise.all(calls)
    results.forEach(({ status, body }, i) => {
      assert.equal(status, 200)
      assert.deepEqual([body.status, body.stdout], ['ok', `${i}\n`], `call ${i}: ${JSON.stringify(body.error)}`)
    })
    const after = await post(`${fleet.url}/v1/execute`, { code: 'print("still here")' })
    assert.deepEqual([after.body.status, after.body.runner], ['ok', 'fleet-d'])
  } finally {
    await fleet.close()
  }
})

test('a user error is answered as is, never retried on another runner', async () => {
  const fleet = await startFleet(['fleet-e', 'fleet-f'])
  try {
    const { body } = await post(`${fleet.url}/v1/execute`, {
      code: 'open("/tmp/tries", "a").write("x")\nraise KeyError("k")'
    })
    assert.deepEqual([body.status, body.error.type], ['error', 'KeyError'])
    const metrics = await (await fetch(`${fleet.url}/metrics`)).text()
    assert.match(
      metrics,
      /sandfleet_gateway_executions_total\{[^}]*status="error"[^}]*\} 1\b/,
      'one attempt, counted once'
    )
  } finally {
    await fleet.close()
  }
})

test("with the fleet's shared secret the gateway reaches its runners; a gateway without it is refused and nothing runs", async () => {
  const secret = 'fleet-test-secret-0123456789'
  const fleet = await startFleet(['fleet-g'], { runnerSecret: secret }, { runnerSecret: secret })
  const stranger = await startGateway({
    config: loadGatewayConfig({
      values: { host: '127.0.0.1', port: 0, runners: fleet.runners.map((r) => r.url), loadPollMs: 50 }
    }),
    logger: false
  })
  try {
    const ok = await post(`${fleet.url}/v1/execute`, { code: 'print(6 * 7)' })
    assert.deepEqual([ok.body.status, ok.body.stdout], ['ok', '42\n'])
    const refused = await post(`${stranger.url}/v1/execute`, { code: 'open("/tmp/ran", "w")\nprint("ran")' })
    assert.equal(refused.body.status, 'infra_error', "a refusal is the fleet's fault, never the code's")
    // its load polls are refused, so it never counts the runner ready
    assert.equal(refused.body.error.type, 'SF_ERR_GATEWAY_NO_RUNNERS')
    assert.equal((await fetch(`${stranger.url}/readyz`)).status, 503)
    const direct = await fetch(`${fleet.runners[0].url}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"code":"print(1)"}'
    })
    assert.equal(direct.status, 401)
    assert.equal(fleet.runners[0].runner.poolStats()[0].jobs, 1, 'only the authorized call ran')
  } finally {
    await stranger.close()
    await fleet.close()
  }
})
