import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LIMITS, callContext } from '@sandfleet/protocol'
import { Runner } from '../../src/runner/runner.ts'
import { runnerConfig } from '../../src/config.ts'
import { ScriptedDriver } from '../helpers/scripted-driver.ts'

/** Runs `body` on `runner` once it started, and closes it after, whatever `body` did. */
async function started(runner: Runner, body: (runner: Runner) => Promise<void>): Promise<void> {
  try {
    await runner.start()
    await body(runner)
  } finally {
    await runner.close()
  }
}

test('runner: execute fills runner, sandbox, request_id; load reports the pool', async () => {
  const driver = new ScriptedDriver()
  await started(
    new Runner(runnerConfig({ id: 'r-test', poolSize: 2, languages: ['python'] }), { driver }),
    async (runner) => {
      assert.equal(runner.state, 'ready')
      const res = await runner.execute({ code: 'echo hi', request_id: 'abc' })
      assert.equal(res.status, 'ok')
      assert.equal(res.stdout, 'hi\n')
      assert.equal(res.runner, 'r-test')
      assert.equal(res.request_id, 'abc')
      assert.ok(res.sandbox.length > 0)
      const load = runner.load()
      assert.equal(load.capacity, 2)
      assert.equal(load.warm, 2)
      assert.deepEqual(load.languages, ['python'])
      assert.equal(runner.isolation().boundary, 'scripted test driver')
    }
  )
})

test("runner: a pool holds no more sandboxes than its driver's maxPoolSize", async () => {
  const driver = new ScriptedDriver({ maxPoolSize: 2 })
  await started(new Runner(runnerConfig({ poolSize: 5, languages: ['python'] }), { driver }), async (runner) => {
    assert.equal(runner.load().capacity, 2)
    assert.equal(driver.starts, 2)
    assert.equal((await runner.execute({ code: 'echo capped' })).stdout, 'capped\n')
  })
})

test('runner: requests over the configured limits are invalid_request, nothing runs', async () => {
  const driver = new ScriptedDriver()
  await started(
    new Runner(runnerConfig({ poolSize: 1, maxTimeoutMs: 1000, maxCodeBytes: 10, languages: ['python'] }), { driver }),
    async (runner) => {
      const slow = await runner.execute({ code: 'echo x', timeout_ms: 5000 })
      assert.equal(slow.status, 'invalid_request')
      assert.match(slow.error?.message ?? '', /^timeout_ms/)
      const big = await runner.execute({ code: 'echo 0123456789' })
      assert.equal(big.status, 'invalid_request')
      const js = await runner.execute({ code: '1', language: 'javascript' })
      assert.equal(js.status, 'invalid_request')
      assert.equal(js.error?.type, 'SF_ERR_RUNNER_LANGUAGE')
      assert.equal(driver.sandboxes[0].ran.length, 0)
    }
  )
})

test('runner: executeBatch answers in request order and reports each result once', async () => {
  const driver = new ScriptedDriver()
  await started(new Runner(runnerConfig({ poolSize: 2 }), { driver }), async (runner) => {
    const seen: number[] = []
    const results = await runner.executeBatch(
      ['sleep 10', 'echo a', 'echo b'].map((code) => ({ code })),
      (i) => seen.push(i)
    )
    assert.deepEqual(
      results.map((r) => r.stdout),
      ['slept 10\n', 'a\n', 'b\n']
    )
    assert.deepEqual([...seen].sort(), [0, 1, 2])
  })
})

test('runner: a batch mixing refused, queued and overloaded items answers each once, in request order, and metrics count every pool answer', async () => {
  const driver = new ScriptedDriver()
  await started(
    new Runner(runnerConfig({ poolSize: 1, maxTimeoutMs: 1000, maxQueuedJobs: 2, languages: ['python'] }), { driver }),
    async (runner) => {
      const seen: number[] = []
      const requests = [
        { code: 'sleep 10' },
        { code: 'echo too long', timeout_ms: 5000 },
        { code: 'echo a' },
        { code: 'echo b' },
        { code: 'echo c', request_id: 'c' }
      ]
      const results = await runner.executeBatch(requests, (i) => {
        seen.push(i)
        if (i === 2) throw new Error('a listener that throws loses nothing')
      })
      assert.deepEqual(
        results.map((r) => r.status),
        ['ok', 'invalid_request', 'ok', 'ok', 'overloaded']
      )
      assert.deepEqual(
        results.map((r) => r.stdout),
        ['slept 10\n', '', 'a\n', 'b\n', '']
      )
      assert.equal(results[4].request_id, 'c')
      assert.deepEqual([...seen].sort(), [0, 1, 2, 3, 4], 'each item seen once')
      assert.deepEqual(driver.sandboxes[0].ran, ['sleep 10', 'echo a', 'echo b'])
      const text = await runner.registry.metrics()
      assert.match(text, /sandfleet_runner_executions_total\{[^}]*status="ok"[^}]*\} 3\n/)
      assert.match(text, /sandfleet_runner_executions_total\{[^}]*status="overloaded"[^}]*\} 1\n/)
      assert.equal(await runner.executeBatch([]).then((r) => r.length), 0)
    }
  )
})

test('runner: close drains, closes the driver, is idempotent, then answers infra_error', async () => {
  const driver = new ScriptedDriver()
  const runner = new Runner(runnerConfig({ poolSize: 1 }), { driver })
  await runner.start()
  const inflight = runner.execute({ code: 'sleep 20' })
  await Promise.all([runner.close(), runner.close()])
  assert.equal((await inflight).status, 'ok')
  assert.equal(runner.state, 'closed')
  assert.equal(driver.closed, true)
  assert.equal(driver.open, 0)
  assert.equal((await runner.execute({ code: 'echo late' })).status, 'infra_error')
})

test('runner: metrics are in its own registry under sandfleet_runner_', async () => {
  const driver = new ScriptedDriver()
  await started(new Runner(runnerConfig({ poolSize: 1 }), { driver }), async (runner) => {
    await runner.execute({ code: 'echo m' })
    const text = await runner.registry.metrics()
    assert.match(text, /sandfleet_runner_executions_total\{[^}]*status="ok"[^}]*\} 1\n/)
    assert.match(text, /sandfleet_runner_sandboxes_warm\{[^}]*language="python"[^}]*\} 1\n/)
  })
})

test("runner: a job has one deadline for waiting, from when its call came in: a wait for the runner's start counts against it, with or without a budget of the caller's", async () => {
  const driver = new ScriptedDriver({ startMs: 300 })
  const runner = new Runner(runnerConfig({ poolSize: 2, queueTimeoutMs: 10_000, languages: ['python'] }), { driver })
  try {
    const started = runner.start()
    // `warmed 0` prints the wait its sandbox was left (what an executor gets as wait_ms)
    const [own, budget] = await Promise.all([
      runner.execute({ code: 'warmed 0' }),
      runner.execute({ code: 'warmed 0' }, callContext({ budgetMs: 5000 }))
    ])
    await started
    assert.deepEqual([own.status, budget.status], ['ok', 'ok'])
    assert.ok(Number(own.stdout) <= 9750, `the runner's queueTimeoutMs, less the start: ${own.stdout}`)
    assert.ok(Number(budget.stdout) <= 4750, `the caller's budget, less the start: ${budget.stdout}`)
  } finally {
    await runner.close()
  }
})

test('runner: a prepared call is checked once; run answers a refused one invalid_request naming the field, and the same call runs when it passes', async () => {
  const driver = new ScriptedDriver()
  await started(
    new Runner(runnerConfig({ poolSize: 1, maxTimeoutMs: 1000, languages: ['python'] }), { driver }),
    async (runner) => {
      const refused = runner.prepare({ code: 'echo x', timeout_ms: 5000, request_id: 'r-9' })
      assert.deepEqual(
        [refused.problem?.code, refused.problem?.field, refused.job],
        ['SF_ERR_RUNNER_LIMIT', 'timeout_ms', undefined]
      )
      const answer = await runner.run(refused)
      assert.deepEqual(
        [answer.status, answer.error?.type, answer.request_id],
        ['invalid_request', 'SF_ERR_RUNNER_LIMIT', 'r-9']
      )
      assert.match(answer.error?.message ?? '', /^timeout_ms: /)
      const ok = runner.prepare({ code: 'echo y' })
      // no timeout_ms: the contract's default, within this runner's maxTimeoutMs
      assert.deepEqual(
        [ok.problem, ok.job?.request.timeout_ms, ok.job?.request.stdin],
        [undefined, Math.min(LIMITS.defaultTimeoutMs, 1000), '']
      )
      assert.equal((await runner.run(ok)).stdout, 'y\n')
      assert.deepEqual(driver.sandboxes[0].ran, ['echo y'])
    }
  )
})
