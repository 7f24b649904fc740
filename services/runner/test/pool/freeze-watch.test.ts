import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { FreezeWatch } from '../../src/pool/freeze-watch.ts'

function freeze(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

test('freeze watch: a jump of the clock past the threshold is a freeze, seen by the first check after it', async () => {
  const watch = new FreezeWatch(200)
  try {
    const before = performance.now()
    assert.equal(watch.frozenSince(before), 0)
    freeze(800)
    const frozen = watch.frozenSince(before)
    assert.ok(frozen >= 600, `a freeze of about 800 ms was seen (${frozen})`)
    assert.equal(watch.frozenSince(performance.now()), 0, 'none after it')
    await sleep(50)
    assert.equal(watch.freezes.length, 1, 'the ticker saw the same freeze, not a second one')
  } finally {
    watch.close()
  }
})

test('freeze watch: a timer that fired later than the threshold marks a freeze from when it was due', () => {
  const watch = new FreezeWatch(200)
  try {
    const now = performance.now()
    assert.equal(Math.round(watch.late(now - 50, now)), 50)
    assert.equal(watch.freezes.length, 0, 'late within the threshold: a busy loop, not a freeze')
    watch.late(now - 5000, now)
    assert.deepEqual(watch.freezes, [{ from: now - 5000, to: now }])
    assert.ok(watch.frozenSince(now - 6000) >= 5000)
  } finally {
    watch.close()
  }
})
