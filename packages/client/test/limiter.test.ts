import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Limiter } from '@sandfleet/client'

test('limiter never runs more than its limit at once and runs everything', async () => {
  const limiter = new Limiter(3)
  let running = 0
  let peak = 0
  const out = await Promise.all(
    Array.from(
      { length: 20 },
      async (_, i) =>
        await limiter.run(async () => {
          running++
          peak = Math.max(peak, running)
          await new Promise((resolve) => setImmediate(resolve))
          running--
          return i
        })
    )
  )
  assert.equal(peak, 3)
  assert.deepEqual(
    out,
    Array.from({ length: 20 }, (_, i) => i)
  )
  assert.equal(limiter.active, 0)
})

test('a failing task releases its slot', async () => {
  const limiter = new Limiter(1)
  await assert.rejects(
    limiter.run(async () => {
      throw new Error('boom')
    })
  )
  assert.equal(await limiter.run(async () => 7), 7)
  assert.throws(() => new Limiter(0), RangeError)
})
