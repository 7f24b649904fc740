import { test } from 'node:test'
import assert from 'node:assert/strict'
import { OutcomeCounter, median, percentile, summarize } from '../src/stats.ts'

test('percentile is nearest-rank: the smallest sample with at least p of the samples at or below it', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1)
  assert.equal(percentile(hundred, 0.5), 50)
  assert.equal(percentile(hundred, 0.9), 90)
  assert.equal(percentile(hundred, 0.99), 99)
  assert.equal(percentile(hundred, 1), 100)
  assert.equal(percentile([1, 2, 3, 4], 0.5), 2)
  assert.equal(percentile([7], 0.01), 7)
  assert.ok(Number.isNaN(percentile([], 0.5)))
  assert.throws(() => percentile([1], 0), RangeError)
  assert.throws(() => percentile([1], 1.5), RangeError)
})

test('summarize sorts numerically (not as strings) and leaves its input alone', () => {
  const samples = [10, 9, 100, 2, 1.5]
  const s = summarize(samples)
  assert.deepEqual(samples, [10, 9, 100, 2, 1.5])
  assert.deepEqual(s, { n: 5, min: 1.5, mean: 122.5 / 5, p50: 9, p90: 100, p99: 100, max: 100 })
  const empty = summarize([])
  assert.equal(empty.n, 0)
  assert.ok(Number.isNaN(empty.p50) && Number.isNaN(empty.max) && Number.isNaN(empty.mean))
})

test('OutcomeCounter counts by key, every key but ok is a failure, largest count first', () => {
  const c = new OutcomeCounter()
  c.add('ok', 5)
  c.add('timeout')
  c.add('http_429', 3)
  c.add('ok')
  assert.equal(c.total, 10)
  assert.equal(c.get('ok'), 6)
  assert.equal(c.get('never'), 0)
  assert.equal(c.failures(), 4)
  assert.deepEqual(Object.entries(c.toObject()), [
    ['ok', 6],
    ['http_429', 3],
    ['timeout', 1]
  ])
})

test('median is the nearest-rank middle (the lower one of an even count), unsorted input left as it is', () => {
  const xs = [5, 1, 4, 2]
  assert.equal(median(xs), 2)
  assert.equal(median([3, 1, 2]), 2)
  assert.deepEqual(xs, [5, 1, 4, 2])
  assert.ok(Number.isNaN(median([])))
})
