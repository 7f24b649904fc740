import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Counter, Histogram, Registry } from 'prom-client'
import { counterChild, histogramChild } from '../src/children.ts'

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.1, 1]
const VALUES = [0, 0.0005, 0.0007, 0.001, 0.003, 0.2, 1, 1.5, 60, 0.00049]

function metrics(): { registry: Registry; jobs: Counter<'status' | 'language'>; seconds: Histogram<'language'> } {
  const registry = new Registry()
  registry.setDefaultLabels({ runner: 'r1' })
  const registers = [registry]
  return {
    registry,
    jobs: new Counter({ name: 'jobs_total', help: 'Jobs', labelNames: ['status', 'language'], registers }),
    seconds: new Histogram({
      name: 'job_seconds',
      help: 'Run time',
      labelNames: ['language'],
      buckets: BUCKETS,
      registers
    })
  }
}

test("children give the same exposition as prom-client's own methods, through reset and remove", async () => {
  const slow = metrics()
  const fast = metrics()
  const ok = counterChild(fast.jobs, { status: 'ok', language: 'python' })
  const err = counterChild(fast.jobs, { status: 'error', language: 'python' })
  const python = histogramChild(fast.seconds, { language: 'python' })
  const js = histogramChild(fast.seconds, { language: 'javascript' })
  const both = async (label: string): Promise<void> => {
    assert.equal(await fast.registry.metrics(), await slow.registry.metrics(), label)
  }
  for (const v of VALUES) {
    ok.inc()
    slow.jobs.inc({ status: 'ok', language: 'python' })
    python.observe(v)
    slow.seconds.observe({ language: 'python' }, v)
  }
  err.inc(3)
  slow.jobs.inc({ status: 'error', language: 'python' }, 3)
  js.observe(0.002)
  slow.seconds.observe({ language: 'javascript' }, 0.002)
  await both('after the first updates')
  assert.match(await fast.registry.metrics(), /job_seconds_bucket\{le="0\.001",runner="r1",language="python"\} 5\n/)
  fast.jobs.reset()
  slow.jobs.reset()
  fast.seconds.remove({ language: 'python' })
  slow.seconds.remove({ language: 'python' })
  await both('right after reset and remove')
  ok.inc()
  slow.jobs.inc({ status: 'ok', language: 'python' })
  python.observe(0.004)
  slow.seconds.observe({ language: 'python' }, 0.004)
  js.observe(0.5)
  slow.seconds.observe({ language: 'javascript' }, 0.5)
  await both('updates after reset and remove')
  assert.match(await fast.registry.metrics(), /jobs_total\{status="ok",language="python",runner="r1"\} 1\n/)
})

test("a child finds its series once, through the metric's own method, and then updates it without calling it", () => {
  const { jobs, seconds } = metrics()
  let incs = 0
  let observes = 0
  const inc = jobs.inc.bind(jobs)
  const observe = seconds.observe.bind(seconds)
  jobs.inc = ((...args: Parameters<typeof inc>) => {
    incs++
    inc(...args)
  }) as typeof jobs.inc
  seconds.observe = ((...args: Parameters<typeof observe>) => {
    observes++
    observe(...args)
  }) as typeof seconds.observe
  const ok = counterChild(jobs, { status: 'ok', language: 'python' })
  const python = histogramChild(seconds, { language: 'python' })
  for (let i = 0; i < 100; i++) {
    ok.inc()
    python.observe(i / 1000)
  }
  assert.deepEqual([incs, observes], [1, 1])
})

test('children refuse what prom-client refuses: bad labels, values that are not finite, a counter going down', () => {
  const { jobs, seconds } = metrics()
  assert.throws(() => {
    counterChild(jobs, { status: 'ok', nope: 'x' } as never).inc()
  }, /label/i)
  const ok = counterChild(jobs, { status: 'ok', language: 'python' })
  ok.inc()
  assert.throws(() => {
    ok.inc(-1)
  }, /decrease/)
  assert.throws(() => {
    ok.inc(Infinity)
  }, /not a valid number/)
  const python = histogramChild(seconds, { language: 'python' })
  python.observe(1)
  assert.throws(() => {
    python.observe(Number.NaN)
  }, /not a valid number/)
})

test("a metric that does not keep prom-client 15's storage gets a child that calls its own methods", () => {
  const calls: unknown[][] = []
  const fake = {
    inc: (...args: unknown[]) => calls.push(['inc', ...args]),
    observe: (...args: unknown[]) => calls.push(['observe', ...args])
  }
  const c = counterChild(fake as unknown as Counter<'status'>, { status: 'ok' })
  const h = histogramChild(fake as unknown as Histogram<'language'>, { language: 'python' })
  c.inc()
  c.inc(2)
  h.observe(0.5)
  h.observe(0.25)
  assert.deepEqual(calls, [
    ['inc', { status: 'ok' }, 1],
    ['inc', { status: 'ok' }, 2],
    ['observe', { language: 'python' }, 0.5],
    ['observe', { language: 'python' }, 0.25]
  ])
})
