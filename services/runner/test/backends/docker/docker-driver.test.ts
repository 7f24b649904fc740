import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveExecRequest } from '@sandfleet/protocol'
import { DockerDriver } from '../../../src/backends/docker/docker-driver.ts'
import type { DockerSandbox } from '../../../src/backends/docker/docker-sandbox.ts'
import { DockerEngine, resolveDockerOptions } from '../../../src/backends/docker/docker-engine.ts'
import { REPO_EXECUTOR } from '../../helpers/docker.ts'

const run = (code: string) => ({ request: resolveExecRequest({ code, timeout_ms: 5000 }), maxOutputBytes: 65536 })

test('an unreachable engine is a start-up error that says how to start it', async () => {
  const driver = new DockerDriver({ runnerId: 'docker-test-noengine', socketPath: '/nonexistent/docker.sock' })
  await assert.rejects(
    driver.check(),
    (err: Error) => /start it/.test(err.message) && (err as { code?: string }).code === 'SF_ERR_RUNNER_DOCKER_ENGINE'
  )
  await driver.close()
})

test('a missing image is a start-up error that says how to build it', async () => {
  const driver = new DockerDriver({ runnerId: 'docker-test-noimage', image: 'sandfleet/does-not-exist:0' })
  await assert.rejects(driver.check(), (err: Error) => /build-image\.sh/.test(err.message))
  await driver.close()
})

test('a hardened container runs jobs: ok, uid 65534, read-only root, no network; nothing left after close', async () => {
  const runnerId = `docker-test-${process.pid}`
  const driver = new DockerDriver({ runnerId, executorPath: REPO_EXECUTOR })
  const engine = new DockerEngine(resolveDockerOptions({ runnerId }))
  try {
    await driver.check()
    assert.equal(typeof driver.manifest()?.python, 'string')
    const sandbox = driver.createSandbox('docker-0')
    await sandbox.start()
    const ok = await sandbox.execute(run('print(1+1)'))
    assert.equal(ok.status, 'ok')
    assert.equal(ok.stdout, '2\n')
    const uid = await sandbox.execute(run('import os; print(os.getuid())'))
    assert.equal(uid.stdout, '65534\n')
    const host = await sandbox.execute(run('import socket; print(socket.gethostname())'))
    assert.equal(host.stdout, 'sandbox\n', "the container's hostname is not its id")
    const ro = await sandbox.execute(run('open("/etc/x", "w")'))
    assert.equal(ro.status, 'error')
    const net = await sandbox.execute(
      run(
        'import socket\ntry:\n  socket.create_connection(("10.0.0.1", 80), 1); print("connected")\nexcept OSError as e: print("refused")'
      )
    )
    assert.equal(net.stdout, 'refused\n')
    assert.ok(
      (await engine.listContainers()).includes((sandbox as DockerSandbox).containerId as string),
      "the sandbox's container carries the runner's label"
    )
  } finally {
    await driver.close()
  }
  assert.deepEqual(await engine.listContainers(), [])
})

test('check() removes the stale containers a previous run of the same runner id left, and still reads the manifest', async () => {
  const runnerId = `docker-test-stale-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId }))
  const left = await engine.docker.createContainer(engine.containerSpec('left-behind'))
  const driver = new DockerDriver({ runnerId, executorPath: REPO_EXECUTOR })
  try {
    assert.deepEqual(await engine.listContainers(), [left.id])
    await driver.check()
    assert.deepEqual(await engine.listContainers(), [])
    assert.equal(typeof driver.manifest()?.python, 'string')
  } finally {
    await driver.close()
    await left.remove({ force: true }).catch(() => {})
  }
})
