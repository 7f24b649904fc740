import { test } from 'node:test'
import assert from 'node:assert/strict'
import { listenRunner } from '../src/main.ts'
import { runnerConfig } from '../src/config.ts'
import { DRIVER_FACTORIES, registerDriver } from '../src/runner/driver-registry.ts'
import { silentLogger } from '../src/logger.ts'
import { ScriptedDriver } from './helpers/scripted-driver.ts'

test('main: listenRunner serves real HTTP on 127.0.0.1 and drains on close', async () => {
  const saved = DRIVER_FACTORIES.unsafe
  const driver = new ScriptedDriver()
  registerDriver('unsafe', () => driver)
  const server = await listenRunner(runnerConfig({ backend: 'unsafe', port: 0, poolSize: 2 }), { logger: silentLogger })
  try {
    const mixed = Array.from({ length: 100 }, (_, i) =>
      i % 3 === 0 ? { code: `echo ${i}` } : i % 3 === 1 ? { code: 'sleep 2' } : { code: 'retire unswept' }
    )
    const results = await Promise.all(
      mixed.map(async (req) => {
        const res = await fetch(`${server.url}/v1/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(req)
        })
        return (await res.json()) as { status: string; stdout: string }
      })
    )
    results.forEach((r, i) => {
      if (i % 3 === 0) assert.deepEqual([r.status, r.stdout], ['ok', `${i}\n`])
      else if (i % 3 === 1) assert.equal(r.status, 'ok')
      else assert.equal(r.status, 'timeout')
    })
    assert.match(server.runner.backendReason, /backend unsafe/)
  } finally {
    await server.close()
    if (saved === undefined) Reflect.deleteProperty(DRIVER_FACTORIES, 'unsafe')
    else DRIVER_FACTORIES.unsafe = saved
  }
  assert.equal(driver.open, 0, 'every sandbox closed')
})

test('main: close drains in order: readiness false and new jobs refused as retriable while a job in flight finishes and is answered, then the server closes', async () => {
  const saved = DRIVER_FACTORIES.unsafe
  const driver = new ScriptedDriver()
  registerDriver('unsafe', () => driver)
  const server = await listenRunner(runnerConfig({ backend: 'unsafe', port: 0, poolSize: 1 }), { logger: silentLogger })
  const exec = async (code: string): Promise<{ status: string; stdout: string; error?: { type: string } }> => {
    const res = await fetch(`${server.url}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code })
    })
    return (await res.json()) as { status: string; stdout: string }
  }
  try {
    const inFlight = exec('sleep 600')
    while (server.runner.load().in_flight === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const closed = server.close()
    const ready = await fetch(`${server.url}/readyz`)
    assert.equal(ready.status, 503, 'readiness is false while draining')
    assert.equal(((await (await fetch(`${server.url}/v1/runner/load`)).json()) as { state: string }).state, 'draining')
    const refused = await exec('echo late')
    assert.deepEqual([refused.status, refused.error?.type], ['infra_error', 'SF_ERR_RUNNER_DRAINING'])
    assert.equal((await inFlight).status, 'ok', 'the job in flight finished and was answered')
    await closed
    await assert.rejects(fetch(`${server.url}/healthz`), 'the server is closed after the drain')
  } finally {
    await server.close()
    if (saved === undefined) Reflect.deleteProperty(DRIVER_FACTORIES, 'unsafe')
    else DRIVER_FACTORIES.unsafe = saved
  }
  assert.equal(driver.open, 0, 'every sandbox torn down')
})
