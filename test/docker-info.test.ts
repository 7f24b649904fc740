// GET /v1/info on a real fleet on the docker backend: each runner reports the image's manifest
// (Python and package versions, read at start-up) and its isolation; the gateway lists them all,
// an unreachable runner included.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { call, startFleet } from './helpers/fleet.ts'

const EXECUTOR = fileURLToPath(new URL('../sandbox-images/python/executor.py', import.meta.url))

test('GET /v1/info: docker runners report the image manifest and isolation; the gateway aggregates them, a dead runner listed as down', async () => {
  // A port that refuses connections: a runner that is gone.
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const dead = `http://127.0.0.1:${(probe.address() as { port: number }).port}`
  await new Promise<void>((resolve) =>
    probe.close(() => {
      resolve()
    })
  )
  const ids = [`info-a-${process.pid}`, `info-b-${process.pid}`]
  const fleet = await startFleet(ids, {
    backend: 'docker',
    poolSize: 1,
    languages: ['python'],
    maxSessions: 0,
    executorPath: EXECUTOR
  })
  try {
    const own = await call('GET', `${fleet.runners[0].url}/v1/info`)
    assert.equal(own.status, 200)
    assert.equal(own.body.runner, ids[0])
    assert.equal(own.body.backend, 'docker')
    assert.match(own.body.isolation.python.boundary, /Docker container per slot/)
    const m = own.body.manifest
    assert.match(m.python, /^3\.\d+\.\d+$/)
    for (const name of ['numpy', 'sympy', 'scipy', 'mpmath'])
      assert.match(m.packages[name] ?? '', /^\d+\.\d+/, `${name} version in the manifest`)
    assert.match(m.image_id, /^sha256:/)
    assert.equal(m.image_ref, 'sandfleet/python:1')
    // The manifest is the environment the code sees.
    const seen = await call('GET', `${fleet.url}/v1/info`)
    const run = await fetch(`${fleet.url}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: 'import platform, numpy, sympy\nprint(platform.python_version(), numpy.__version__, sympy.__version__)'
      })
    }).then(async (r) => (await r.json()) as { stdout: string })
    assert.equal(run.stdout, `${m.python} ${m.packages.numpy} ${m.packages.sympy}\n`)

    assert.equal(seen.status, 200)
    assert.deepEqual(seen.body.backends, ['docker'])
    assert.deepEqual(seen.body.pythons, [m.python])
    assert.deepEqual(
      seen.body.runners.map((r: { info: { runner: string } | null }) => r.info?.runner).sort(),
      ids.slice().sort()
    )
    assert.ok(seen.body.runners.every((r: { up: boolean }) => r.up))
  } finally {
    await fleet.close()
  }
  // With a runner that does not answer: listed, down, with the reason; the others still reported.
  const partial = await startFleet([`info-c-${process.pid}`], {
    backend: 'docker',
    poolSize: 1,
    languages: ['python'],
    maxSessions: 0,
    executorPath: EXECUTOR
  })
  try {
    const { url } = partial.runners[0]
    const { startGateway, loadGatewayConfig } = await import('@sandfleet/gateway')
    const gw = await startGateway({
      config: loadGatewayConfig({ values: { host: '127.0.0.1', port: 0, runners: [url, dead], loadPollMs: 50 } }),
      logger: false
    })
    try {
      const seen = await call('GET', `${gw.url}/v1/info`)
      assert.equal(seen.status, 200)
      const down = seen.body.runners.find((r: { member: string }) => r.member === dead)
      assert.deepEqual([down.up, down.info], [false, null])
      assert.match(down.error, /ECONNREFUSED|connect/i)
      assert.equal(
        seen.body.runners.find((r: { member: string }) => r.member === new URL(url).origin).info.backend,
        'docker'
      )
    } finally {
      await gw.close()
    }
  } finally {
    await partial.close()
  }
})
