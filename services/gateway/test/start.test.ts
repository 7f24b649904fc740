/**
 * startGateway's `after`: the app is built at once but listens only when `after` settles
 * (`sandfleet serve` overlaps the build with its runner's warm-up); a rejection closes the app.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { startGateway, loadGatewayConfig, type RunnerClient } from '@sandfleet/gateway'
import type { RunnerLoad } from '@sandfleet/protocol'
import { fakeInfo, notJudging } from './helpers/fake-runner.ts'

/** A free port on 127.0.0.1 (listened on and released). */
async function freePort(): Promise<number> {
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve()
    })
  )
  return port
}

const configOn = (port: number): ReturnType<typeof loadGatewayConfig> =>
  loadGatewayConfig({
    env: {},
    values: { host: '127.0.0.1', port, runners: ['http://127.0.0.1:9'], loadPollMs: 60_000 }
  })

async function refused(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/healthz`)
    return false
  } catch {
    return true
  }
}

test('the gateway listens only once `after` resolves', async () => {
  const port = await freePort()
  let release = (): void => {}
  const after = new Promise<void>((resolve) => {
    release = resolve
  })
  const starting = startGateway({ config: configOn(port), logger: false, after })
  await sleep(300)
  assert.equal(await refused(port), true, 'listening before `after` resolved')
  release()
  const gateway = await starting
  try {
    assert.equal(gateway.url, `http://127.0.0.1:${port}`)
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200)
  } finally {
    await gateway.close()
  }
})

test('a rejected `after` is thrown and nothing listens', async () => {
  const port = await freePort()
  await assert.rejects(
    startGateway({ config: configOn(port), logger: false, after: Promise.reject(new Error('runner failed to start')) }),
    /runner failed to start/
  )
  assert.equal(await refused(port), true)
})

test('with `after`, /readyz is 200 as soon as the gateway listens (the loads are polled again, not at the next poll)', async () => {
  let state: RunnerLoad['state'] = 'starting'
  const load = (): RunnerLoad => ({
    runner: 'local',
    state,
    backend: 'process',
    languages: ['python'],
    capacity: 4,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: state === 'ready' ? 4 : 0,
    busy: 0,
    sessions: 0
  })
  const client: RunnerClient = {
    name: 'local',
    execute: async () => {
      throw new Error('not called')
    },
    executeBatch: async () => {
      throw new Error('not called')
    },
    ...notJudging('local'),
    load: async () => load(),
    info: async () => fakeInfo(load()),
    close: async () => {}
  }
  const config = loadGatewayConfig({ env: {}, values: { host: '127.0.0.1', port: 0, loadPollMs: 60_000 } })
  const after = sleep(200).then(() => {
    state = 'ready'
  })
  const gateway = await startGateway({ config, logger: false, clients: [client], after })
  try {
    assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200)
  } finally {
    await gateway.close()
  }
})
