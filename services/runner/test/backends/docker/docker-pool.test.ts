// Pool life on the docker backend: a container killed from outside while idle is replaced at
// once, and no job is handed to the dead one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Runner } from '../../../src/runner/runner.ts'
import { runnerConfig } from '../../../src/config.ts'
import { DockerEngine, resolveDockerOptions } from '../../../src/backends/docker/docker-engine.ts'
import { REPO_EXECUTOR } from '../../helpers/docker.ts'
import { DockerDriver } from '../../../src/backends/docker/docker-driver.ts'

test('docker backend: an idle container killed from outside is replaced without a job noticing', async () => {
  const id = `docker-pool-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId: id }))
  const driver = new DockerDriver({ runnerId: id, executorPath: REPO_EXECUTOR })
  const runner = new Runner(runnerConfig({ id, languages: ['python'], poolSize: 1, maxSessions: 0 }), { driver })
  try {
    await runner.start()
    // The container that served this call (code inside sees only the hostname `sandbox`).
    const first = await runner.execute({ code: 'print(1)' })
    assert.equal(first.status, 'ok')
    const container = driver.containerOf(first.sandbox)
    assert.ok(container !== undefined, `no container for ${first.sandbox}`)
    assert.ok((await engine.listContainers()).includes(container), `container ${container} is not the runner's`)
    await engine.docker.getContainer(container).kill()
    const t0 = performance.now()
    while (runner.poolStats()[0].replacements < 1 || runner.poolStats()[0].warm < 1) {
      assert.ok(performance.now() - t0 < 20_000, 'no replacement within 20 s')
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    const next = await runner.execute({ code: 'print(2)' })
    assert.deepEqual([next.status, next.stdout], ['ok', '2\n'])
    assert.notEqual(next.sandbox, first.sandbox)
    assert.deepEqual(
      await engine.listContainers().then((ids) => ids.includes(container)),
      false,
      'the killed container was removed'
    )
  } finally {
    await runner.close()
  }
  assert.deepEqual(await engine.listContainers(), [])
})

test('docker backend: a timeout keeps the container; a warm spare takes over from one retired (its zygote killed), and a new spare is booted', async () => {
  const id = `docker-spare-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId: id }))
  const driver = new DockerDriver({ runnerId: id, executorPath: REPO_EXECUTOR, spares: 1 })
  const runner = new Runner(runnerConfig({ id, languages: ['python'], poolSize: 1, maxSessions: 0 }), { driver })
  /** The container that served a call (code inside sees only the hostname `sandbox`). */
  const host = async (): Promise<string> => {
    const r = await runner.execute({ code: 'print(1)' })
    assert.equal(r.status, 'ok')
    const container = driver.containerOf(r.sandbox)
    assert.ok(container !== undefined, `no container for ${r.sandbox}`)
    return container
  }
  /** The containers of the runner once the spare is warm and `n` containers are left. */
  const settle = async (n: number): Promise<string[]> => {
    const t0 = performance.now()
    for (;;) {
      const ids = await engine.listContainers()
      if (ids.length === n && driver.warmSpares === 1) return ids
      assert.ok(performance.now() - t0 < 20_000, `${ids.length} containers, not ${n}; ${driver.warmSpares} warm spares`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  try {
    await runner.start()
    const serving = await host()
    const [spare] = (await settle(2)).filter((c) => c !== serving)
    assert.ok(spare !== undefined)
    const spin = await runner.execute({ code: 'while True: pass', timeout_ms: 200 })
    assert.equal(spin.status, 'timeout')
    assert.equal(await host(), serving, 'the call after the timeout ran in the same container')
    // A job that kills its zygote leaves what the sweep cannot undo: the container is retired.
    const attack = await runner.execute({ code: 'import sympy, os, time\nos.kill(os.getppid(), 9)\ntime.sleep(5)' })
    assert.equal(attack.status, 'killed')
    const next = await host()
    assert.ok(
      spare === next,
      `the call after the retirement ran in ${next.slice(0, 12)}, not in the spare ${spare.slice(0, 12)}`
    )
    const now = await settle(2)
    assert.ok(!now.includes(serving), 'the retired container was removed')
  } finally {
    await runner.close()
  }
  assert.deepEqual(await engine.listContainers(), [])
})

test('docker backend: a memory bomb past the container limit answers memory; the runner serves on and the host keeps its memory', async () => {
  const id = `docker-bomb-${process.pid}`
  const runner = new Runner(
    runnerConfig({
      id,
      backend: 'docker',
      languages: ['python'],
      poolSize: 1,
      maxSessions: 0,
      executorPath: REPO_EXECUTOR,
      sandboxMemoryMb: 256
    })
  )
  try {
    await runner.start()
    const rss = process.memoryUsage().rss
    const bomb = await runner.execute({
      code: 'x = []\nwhile True: x.append(bytearray(16 << 20))',
      memory_mb: 4096,
      timeout_ms: 30_000
    })
    assert.equal(bomb.status, 'memory', JSON.stringify(bomb.error))
    const next = await runner.execute({ code: 'print("after")' })
    assert.deepEqual([next.status, next.stdout], ['ok', 'after\n'])
    assert.equal(
      next.sandbox,
      bomb.sandbox,
      'the sandbox that ran out of memory serves on: the kernel killed the job, not the sandbox'
    )
    assert.equal(runner.state, 'ready')
    assert.ok(process.memoryUsage().rss - rss < 64 << 20, "the runner's own memory did not grow with the bomb")
  } finally {
    await runner.close()
  }
})

test('docker backend: many jobs with large stdins at once all run, each reading its own stdin whole', async () => {
  const id = `docker-stdin-${process.pid}`
  const engine = new DockerEngine(resolveDockerOptions({ runnerId: id }))
  const runner = new Runner(
    runnerConfig({
      id,
      backend: 'docker',
      languages: ['python'],
      poolSize: 2,
      maxSessions: 0,
      queueTimeoutMs: 300_000,
      executorPath: REPO_EXECUTOR
    })
  )
  try {
    await runner.start()
    // 8 jobs of 8-16 MiB each, given at once to 2 sandboxes; half read their stdin, half do not.
    const sizes = Array.from({ length: 8 }, (_, i) => (8 + i) * 2 ** 20 + i)
    const results = await Promise.all(
      sizes.map(
        async (n, i) =>
          await runner.execute({
            code:
              i % 2 === 0
                ? 'import sys, hashlib\nd = sys.stdin.buffer.read()\nprint(len(d), hashlib.sha256(d).hexdigest()[:8])'
                : 'print(1)',
            stdin: String.fromCharCode(97 + i).repeat(n),
            timeout_ms: 30_000
          })
      )
    )
    const { createHash } = await import('node:crypto')
    results.forEach((r, i) => {
      const expected =
        i % 2 === 0
          ? `${sizes[i]} ${createHash('sha256')
              .update(String.fromCharCode(97 + i).repeat(sizes[i]))
              .digest('hex')
              .slice(0, 8)}\n`
          : '1\n'
      assert.deepEqual(
        [r.status, r.stdout],
        ['ok', expected],
        `job ${i} (${sizes[i]} bytes of stdin): ${r.error?.message ?? ''}`
      )
    })
    assert.equal(runner.poolStats()[0].replacements, 0, 'no sandbox was stopped as unanswering')
  } finally {
    await runner.close()
  }
  assert.deepEqual(await engine.listContainers(), [])
})
