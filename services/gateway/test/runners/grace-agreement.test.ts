import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RunnerLoad } from '@sandfleet/protocol'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { uncoveredGrace } from '../../src/runners/grace-agreement.ts'
import { RunnerSet } from '../../src/runners/runner-set.ts'

const base: RunnerLoad = {
  runner: 'r-grace',
  state: 'ready',
  backend: 'process',
  languages: ['python'],
  capacity: 4,
  in_flight: 0,
  queued: 0,
  queue_limit: 100,
  warm: 4,
  busy: 0,
  sessions: 0
}

/** A runner's load route answering `load()` (its settings may change between polls). */
async function loadServer(load: () => RunnerLoad): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(load()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
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

test("uncoveredGrace: a gateway's callGraceMs must be longer than the runner's graceMs plus its backends' stop; both settings are named", () => {
  assert.equal(uncoveredGrace(5000, { ...base, grace_ms: 2000, stop_ms: 1500 }), undefined)
  assert.equal(uncoveredGrace(5000, base), undefined, 'a runner that does not say is taken as it is')
  const why = uncoveredGrace(5000, { ...base, grace_ms: 4500, stop_ms: 500 })
  assert.match(
    why ?? '',
    /runner r-grace may answer 5000 ms past timeout_ms \(its graceMs 4500 \+ its backends' stop 500 ms\)/
  )
  assert.match(why ?? '', /callGraceMs 5000 \(--call-grace-ms, SANDFLEET_CALL_GRACE_MS\) does not cover/)
  assert.match(why ?? '', /set callGraceMs above 5000 .*or the runner's graceMs \(--grace-ms\) below 4500/)
})

test('a gateway whose callGraceMs cannot cover a runner it starts with refuses to start, naming both settings', async () => {
  const runner = await loadServer(() => ({ ...base, grace_ms: 10_000, stop_ms: 500 }))
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { runners: [runner.url] } }),
    logger: false
  })
  try {
    await assert.rejects(
      async () => {
        await app.ready()
      },
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'SF_ERR_GATEWAY_CONFIG')
        assert.match(err.message, /its graceMs 10000 .*callGraceMs 5000 \(--call-grace-ms/)
        return true
      }
    )
  } finally {
    await app.close()
    await runner.close()
  }
})

test('a runner met later whose grace the gateway cannot cover is refused (never routed to, logged), and taken back once it agrees', async () => {
  let graceMs = 2000
  const runner = await loadServer(() => ({ ...base, grace_ms: graceMs, stop_ms: 500 }))
  const logged: string[] = []
  const logger = {
    info: (_o: object, msg: string) => {
      logged.push(`info ${msg}`)
    },
    warn() {},
    error: (_o: object, msg: string) => {
      logged.push(`error ${msg}`)
    }
  }
  const set = new RunnerSet({ urls: [runner.url], graceMs: 5000, logger })
  try {
    await set.poll()
    assert.equal(set.pick()?.id, 'r-grace')
    graceMs = 8000 // restarted with a longer grace
    await set.poll()
    await set.poll()
    assert.equal(set.pick(), undefined, 'not routed to')
    assert.equal(set.ready(), false)
    assert.equal(set.refusals().length, 1)
    assert.deepEqual(logged.filter((l) => l.startsWith('error')).length, 1, 'said once, not at every poll')
    assert.match(
      logged.find((l) => l.startsWith('error')) ?? '',
      /runner refused: runner r-grace may answer 8500 ms past timeout_ms/
    )
    graceMs = 2000
    await set.poll()
    assert.equal(set.pick()?.id, 'r-grace')
    assert.ok(logged.some((l) => l.startsWith('info runner taken back')))
  } finally {
    await set.close()
    await runner.close()
  }
})
