import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { startInstantFleet } from '../src/instant-fleet.ts'

const root = fileURLToPath(new URL('../../', import.meta.url))

test("an instant fleet is the checkout's own gateway and runner: a batch is answered item by item through them and counted in both their metrics", async () => {
  const fleet = await startInstantFleet(root, 0, 2)
  try {
    const res = await fetch(`${fleet.url}/v1/execute/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        requests: [{ code: 'a' }, { code: 'b', language: 'javascript' }, { code: 'c', request_id: 'r3' }]
      })
    })
    assert.equal(res.status, 200)
    const { results } = (await res.json()) as {
      results: Array<{ status: string; stdout: string; request_id?: string; sandbox: string }>
    }
    assert.deepEqual(
      results.map((r) => [r.status, r.stdout]),
      [
        ['ok', '2\n'],
        ['ok', '2\n'],
        ['ok', '2\n']
      ]
    )
    assert.equal(results[2].request_id, 'r3')
    assert.ok(results.every((r) => r.sandbox !== ''))
    const metrics = await (await fetch(`${fleet.url}/metrics`)).text()
    assert.match(
      metrics,
      /sandfleet_runner_executions_total\{(?=[^}]*status="ok")(?=[^}]*language="python")[^}]*\} 2\n/
    )
    assert.match(
      metrics,
      /sandfleet_gateway_executions_total\{(?=[^}]*status="ok")(?=[^}]*language="javascript")[^}]*\} 1\n/
    )
  } finally {
    await fleet.close()
  }
})
