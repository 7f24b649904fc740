import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { callContext } from '@sandfleet/protocol'
import { Pool, type PoolOptions } from '../../src/pool/pool.ts'
import { ScriptedDriver, job } from '../helpers/scripted-driver.ts'

function pool(driver: ScriptedDriver, options: Partial<PoolOptions> = {}): Pool {
  return new Pool({
    driver,
    language: 'python',
    runnerId: 'r1',
    size: 1,
    maxJobsPerSandbox: 0,
    maxQueuedJobs: 100,
    replaceBackoffMs: 5,
    replaceBackoffMaxMs: 20,
    ...options
  })
}

/** Runs `body` on `p` once it started, and closes it after, whatever `body` did. */
async function started(p: Pool, body: (p: Pool) => Promise<void>): Promise<void> {
  try {
    await p.start()
    await body(p)
  } finally {
    await p.close()
  }
}

/** {@link job} with its own `timeout_ms`. */
function timed(code: string, timeoutMs: number, options: Parameters<typeof job>[1] = {}): ReturnType<typeof job> {
  return job(code, { ...options, timeoutMs })
}

const until = async (cond: () => boolean): Promise<void> => {
  while (!cond()) await new Promise((resolve) => setImmediate(resolve))
}

test('pool: waiting jobs run in FIFO order on one sandbox', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const results = await Promise.all(['sleep 5', 'echo a', 'echo b', 'echo c'].map((c) => p.run(job(c))))
    assert.deepEqual(
      results.map((r) => r.stdout),
      ['slept 5\n', 'a\n', 'b\n', 'c\n']
    )
    assert.deepEqual(driver.sandboxes[0].ran, ['sleep 5', 'echo a', 'echo b', 'echo c'])
    assert.equal(results[0].runner, 'r1')
    assert.equal(results[0].sandbox, driver.sandboxes[0].id)
  })
})

test('pool: a job that waited past its deadline is answered queue_timeout and never run', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const [first, late] = await Promise.all([
      p.run(job('sleep 60')),
      p.run(job('echo late', { waitMs: 10, requestId: 'req-7' }))
    ])
    assert.equal(first.status, 'ok')
    assert.equal(late.status, 'queue_timeout')
    assert.equal(late.error?.type, 'SF_ERR_RUNNER_QUEUE_TIMEOUT')
    assert.equal(late.request_id, 'req-7')
    assert.ok(!driver.sandboxes[0].ran.includes('echo late'))
  })
})

test('pool: a sandbox may keep a job waiting only what is left of its queue timeout, and that wait is queue time', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const r = await p.run(job('warmed 40'))
    const limit = Number(r.stdout)
    assert.ok(limit > 9000 && limit <= 10_000, `wait limit given to the sandbox: ${r.stdout}`)
    assert.ok(r.queue_ms >= 40, `queue_ms ${r.queue_ms} counts the 40 ms the job waited in the sandbox`)
    assert.equal(r.duration_ms, 1)
    const late = await p.run(job('still-warming'))
    assert.deepEqual(
      [late.status, late.error?.type, late.error?.message, late.sandbox],
      ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'still warming', driver.sandboxes[0].id]
    )
    assert.ok(late.queue_ms > 9000, `queue_ms ${late.queue_ms}`)
    assert.equal(driver.starts, 1, 'the sandbox is kept')
  })
})

test('pool: past the queue bound a job is answered overloaded', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver, { maxQueuedJobs: 1 }), async (p) => {
    const results = await Promise.all([p.run(job('sleep 10')), p.run(job('echo queued')), p.run(job('echo refused'))])
    assert.deepEqual(
      results.map((r) => r.status),
      ['ok', 'ok', 'overloaded']
    )
    assert.equal(results[2].error?.type, 'SF_ERR_RUNNER_OVERLOADED')
  })
})

test('pool: an outcome with retire replaces the sandbox, counted under its reason; the next job runs on the new one', async () => {
  const driver = new ScriptedDriver()
  const replaced: string[] = []
  await started(pool(driver, { events: { replaced: (reason) => replaced.push(reason) } }), async (p) => {
    const t = await p.run(job('retire unswept'))
    assert.equal(t.status, 'timeout')
    const next = await p.run(job('echo after'))
    assert.equal(next.status, 'ok')
    assert.notEqual(next.sandbox, t.sandbox)
    assert.equal(driver.sandboxes[0].state, 'closed')
    assert.deepEqual(replaced, ['unswept'])
    assert.equal(p.stats().replacements, 1)
  })
})

test('pool: a timeout, memory or killed outcome without retire costs the job, not the sandbox; its cpu_ms reaches the result', async () => {
  const driver = new ScriptedDriver()
  const replaced: string[] = []
  await started(pool(driver, { size: 1, events: { replaced: (reason) => replaced.push(reason) } }), async (p) => {
    for (const end of ['timeout', 'memory', 'killed']) {
      const r = await p.run(job(end))
      assert.deepEqual([r.status, r.cpu_ms, r.sandbox], [end, 0.25, driver.sandboxes[0].id])
      const next = await p.run(job('echo next'))
      assert.deepEqual(
        [next.status, next.sandbox],
        ['ok', driver.sandboxes[0].id],
        `the sandbox that answered ${end} takes the next job`
      )
      assert.equal('cpu_ms' in next, false, 'a sandbox that measured nothing gives no cpu_ms')
    }
    assert.deepEqual([driver.starts, replaced, p.stats().replacements], [1, [], 0])
  })
})

test('pool: a rejected execute answers infra_error and replaces the sandbox', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const r = await p.run(job('reject'))
    assert.equal(r.status, 'infra_error')
    assert.match(r.error?.message ?? '', /scripted execute failure/)
    const next = await p.run(job('echo ok'))
    assert.equal(next.status, 'ok')
    assert.notEqual(next.sandbox, r.sandbox)
  })
})

test("pool: a sandbox with no answer by timeout_ms + its driver's stopMs + graceMs gets its job answered timeout, is closed and replaced; its late answer is ignored", async () => {
  const driver = new ScriptedDriver({ stopMs: 20 })
  const replaced: string[] = []
  await started(
    pool(driver, {
      graceMs: 30,
      events: {
        replaced: (reason) => {
          replaced.push(reason)
        }
      }
    }),
    async (p) => {
      const first = driver.sandboxes[0]
      const hung = await p.run(timed('hang', 50, { requestId: 'h' }))
      assert.deepEqual(
        [hung.status, hung.error?.type, hung.exit_code, hung.request_id, hung.sandbox],
        ['timeout', 'Timeout', null, 'h', first.id]
      )
      assert.match(hung.error?.message ?? '', /did not answer within timeout_ms=50 plus 50 ms; it was stopped/)
      assert.equal(first.state, 'closed', 'its close is the hard kill')
      await until(() => replaced.length === 1 && p.stats().warm === 1)
      const next = await p.run(job('echo next'))
      assert.deepEqual([next.status, next.sandbox], ['ok', driver.sandboxes[1].id])
      // the hung sandbox's execute rejected as it closed: ignored, nothing else replaced
      assert.deepEqual([replaced, p.stats().busy, p.stats().replacements], [['hung'], 0, 1])
    }
  )
})

test('pool: a job its sandbox says waits to start has until its startBy plus the same; a job that does not say so has not', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver, { graceMs: 10 }), async (p) => {
    const waited = await p.run(timed('waits 300', 50, { waitMs: 60_000 }))
    assert.deepEqual([waited.status, waited.stdout], ['ok', 'waited 300\n'])
    const slow = await p.run(timed('sleep 300', 50, { waitMs: 60_000 }))
    assert.deepEqual([slow.status, slow.error?.type], ['timeout', 'Timeout'])
  })
})

test('pool: a sandbox is replaced after K jobs', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver, { maxJobsPerSandbox: 2 }), async (p) => {
    const sandboxes: string[] = []
    for (let i = 0; i < 5; i++) sandboxes.push((await p.run(job(`echo ${i}`))).sandbox)
    assert.equal(new Set(sandboxes.slice(0, 2)).size, 1)
    assert.notEqual(sandboxes[2], sandboxes[0])
    assert.equal(new Set(sandboxes).size, 3)
    assert.ok(driver.sandboxes.every((s) => s.jobs <= 2))
  })
})

test('pool: a replacement that fails to start is retried until it comes up', async () => {
  const driver = new ScriptedDriver()
  const failures: unknown[] = []
  await started(pool(driver, { size: 2, events: { startFailed: (e) => failures.push(e) } }), async (p) => {
    driver.failStarts = driver.startFailures + 3
    assert.equal((await p.run(job('retire broken'))).status, 'timeout')
    // The other slot keeps serving while the replacement retries.
    assert.equal((await p.run(job('echo meanwhile'))).status, 'ok')
    await until(() => p.stats().warm === 2)
    assert.equal(failures.length, 3)
    assert.equal(p.stats().startFailures, 3)
  })
})

test('pool: when every slot fails to start, waiting jobs get infra_error instead of hanging', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver, { size: 1 }), async (p) => {
    driver.failStarts = Infinity
    const [t, waiting] = await Promise.all([p.run(job('retire cleanup')), p.run(job('echo waiting'))])
    assert.equal(t.status, 'timeout')
    assert.equal(waiting.status, 'infra_error')
    assert.equal(waiting.error?.type, 'SF_ERR_RUNNER_NO_SANDBOX')
    const fresh = await p.run(job('echo new'))
    assert.equal(fresh.status, 'infra_error')
  })
})

test('pool: start rejects when no sandbox can start', async () => {
  const driver = new ScriptedDriver({ failStarts: Infinity })
  const p = pool(driver, { size: 2 })
  await assert.rejects(p.start(), /no unsafe sandbox could be started: scripted start failure/)
  assert.equal(p.state, 'closed')
})

test('pool: close drains jobs in flight and queued, then closes every sandbox; twice is safe', async () => {
  const driver = new ScriptedDriver()
  const p = pool(driver, { size: 2 })
  await p.start()
  const running = [p.run(job('sleep 20')), p.run(job('sleep 20')), p.run(job('echo queued'))]
  await p.close(5000)
  await p.close(5000)
  const results = await Promise.all(running)
  assert.deepEqual(
    results.map((r) => r.status),
    ['ok', 'ok', 'ok']
  )
  assert.equal(driver.open, 0)
  const after = await p.run(job('echo late'))
  assert.equal(after.status, 'infra_error')
  assert.equal(after.error?.type, 'SF_ERR_RUNNER_DRAINING')
})

test('pool: close without a drain answers every job, none is lost', async () => {
  const driver = new ScriptedDriver()
  const p = pool(driver, { size: 1 })
  await p.start()
  const running = [p.run(job('sleep 10000')), p.run(job('echo queued'))]
  await p.close(0)
  const results = await Promise.all(running)
  assert.deepEqual(
    results.map((r) => r.status),
    ['infra_error', 'infra_error']
  )
  assert.equal(driver.open, 0)
})

test('pool: aborting a waiting job answers it without running it', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const ac = new AbortController()
    const first = p.run(job('sleep 20'))
    const cancelled = p.run(job('echo never'), callContext({ signal: ac.signal }))
    ac.abort()
    assert.equal((await cancelled).error?.type, 'SF_ERR_RUNNER_CANCELLED')
    await first
    assert.deepEqual(driver.sandboxes[0].ran, ['sleep 20'])
  })
})

test('pool: the jobs of one caller wait under one abort listener however many they are, and aborting answers them all in order, none run', async () => {
  const driver = new ScriptedDriver()
  const p = pool(driver)
  const warnings: string[] = []
  const onWarning = (w: Error): void => {
    warnings.push(w.name)
  }
  process.on('warning', onWarning)
  try {
    await p.start()
    const ac = new AbortController()
    const first = p.run(job('sleep 20'))
    const answered: number[] = []
    const waiting = Array.from({ length: 30 }, (_, i) =>
      p.run(job(`echo ${i}`, { requestId: `r${i}` }), callContext({ signal: ac.signal })).then((r) => {
        answered.push(i)
        return r
      })
    )
    assert.equal(getEventListeners(ac.signal, 'abort').length, 1)
    assert.equal(p.stats().queued, 30)
    ac.abort()
    const results = await Promise.all(waiting)
    assert.deepEqual(
      results.map((r) => [r.status, r.error?.type, r.request_id]),
      results.map((_, i) => ['queue_timeout', 'SF_ERR_RUNNER_CANCELLED', `r${i}`])
    )
    assert.deepEqual(
      answered,
      answered.map((_, i) => i),
      'answered in the order they came'
    )
    assert.equal(p.stats().queued, 0)
    await first
    assert.deepEqual(driver.sandboxes[0].ran, ['sleep 20'])
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings, [], 'no MaxListenersExceededWarning')
  } finally {
    process.off('warning', onWarning)
    await p.close()
  }
})

test("pool: a job that left the queue is no longer answered by its caller's abort", async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    const ac = new AbortController()
    const first = p.run(job('sleep 20'), callContext({ signal: ac.signal }))
    const second = p.run(job('sleep 20'), callContext({ signal: ac.signal }))
    const third = p.run(job('echo cancelled'), callContext({ signal: ac.signal }))
    await first
    await until(() => driver.sandboxes[0].ran.length === 2)
    ac.abort()
    assert.deepEqual(
      [(await second).status, (await second).stdout],
      ['ok', 'slept 20\n'],
      'running when the caller left: it finishes'
    )
    assert.equal((await third).error?.type, 'SF_ERR_RUNNER_CANCELLED')
    assert.deepEqual(driver.sandboxes[0].ran, ['sleep 20', 'sleep 20'])
  })
})

test("pool: a job given less time than the pool's queue timeout is answered queue_timeout at its own, and the job ahead of it still runs", async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver), async (p) => {
    let busyDone = false
    const busy = p.run(job('sleep 1500')).then((r) => {
      busyDone = true
      return r
    })
    const patient = p.run(job('echo patient'))
    const hurried = await p.run(job('echo hurried', { waitMs: 100, requestId: 'h' }))
    assert.equal(busyDone, false, 'answered while the sandbox was still busy, not when it freed')
    assert.deepEqual(
      [hurried.status, hurried.error?.type, hurried.request_id],
      ['queue_timeout', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'h']
    )
    assert.match(hurried.error?.message ?? '', /queue timeout 100 ms/)
    assert.ok(hurried.queue_ms >= 99, `queue_ms ${hurried.queue_ms}`)
    assert.equal((await busy).status, 'ok')
    assert.equal((await patient).stdout, 'patient\n')
    assert.deepEqual(driver.sandboxes[0].ran, ['sleep 1500', 'echo patient'])
  })
})

test('pool: a job found on a tampered sandbox runs once, on another sandbox', async () => {
  const driver = new ScriptedDriver()
  const replaced: string[] = []
  await started(pool(driver, { size: 2, events: { replaced: (reason) => replaced.push(reason) } }), async (p) => {
    driver.tamperNext = 1
    const result = await p.run(job('echo once'))
    assert.deepEqual([result.status, result.stdout], ['ok', 'once\n'])
    assert.deepEqual(
      driver.sandboxes.flatMap((s) => s.ran),
      ['echo once'],
      'run once'
    )
    const retired = driver.sandboxes.filter((s) => s.state === 'closed')
    assert.equal(retired.length, 1, 'the tampered sandbox is retired')
    assert.notEqual(result.sandbox, retired[0].id)
    while (replaced.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    assert.deepEqual(replaced, ['tampered'])
  })
})

test('pool: the second try of a job found on a tampered sandbox waits no longer than what is left of its queue timeout', async () => {
  const driver = new ScriptedDriver()
  await started(pool(driver, { size: 1 }), async (p) => {
    driver.startMs = 5000 // the replacement of the only sandbox comes too late for this job
    driver.tamperNext = 1
    const t0 = performance.now()
    const result = await p.run(job('echo never', { waitMs: 200 }))
    assert.equal(result.status, 'queue_timeout')
    assert.ok(performance.now() - t0 < 4000, 'answered at its queue timeout, not when a sandbox came back')
    assert.deepEqual(
      driver.sandboxes.flatMap((s) => s.ran),
      []
    )
  })
})
