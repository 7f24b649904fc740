// Pool life on the docker backend: a container killed from outside while idle is replaced at
// once, and no job is handed to the dead one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Runner } from '../../src/runner.ts'
import { runnerConfig } from '../../src/config.ts'
import { DockerEngine, resolveDockerOptions } from '../../src/drivers/docker-engine.ts'
import { REPO_EXECUTOR } from '../helpers/docker.ts'

test('docker backend: an idle container killed from outside is replaced without a job noticing', async () => {
  const id = `docker-pool-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId: id }))
  const runner = new Runner(runnerConfig({ id, backend: 'docker', languages: ['python'], poolSize: 1, maxSessions: 0, executorPath: REPO_EXECUTOR }))
  try {
    await runner.start()
    const first = await runner.execute({ code: 'print(1)' })
    assert.equal(first.status, 'ok')
    const [container] = await engine.listContainers()
    await engine.docker.getContainer(container).kill()
    const t0 = performance.now()
    while (runner.poolStats()[0].replacements < 1 || runner.poolStats()[0].warm < 1) {
      assert.ok(performance.now() - t0 < 20_000, 'no replacement within 20 s')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const next = await runner.execute({ code: 'print(2)' })
    assert.deepEqual([next.status, next.stdout], ['ok', '2\n'])
    assert.notEqual(next.sandbox, first.sandbox)
    assert.deepEqual(await engine.listContainers().then((ids) => ids.includes(container)), false, 'the killed container was removed')
  } finally {
    await runner.close()
  }
  assert.deepEqual(await engine.listContainers(), [])
})
