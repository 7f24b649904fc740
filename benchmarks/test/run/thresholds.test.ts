import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkThresholds, parseThreshold } from '../../src/run/thresholds.ts'

test('thresholds parse METRIC OP NUMBER and fail on the figures that break them', () => {
  const ts = ['p99<2000', 'wrong==0', 'rate >= 100', 'lost<=0'].map(parseThreshold)
  assert.deepEqual(
    ts.map((t) => [t.metric, t.op, t.value]),
    [
      ['p99', '<', 2000],
      ['wrong', '==', 0],
      ['rate', '>=', 100],
      ['lost', '<=', 0]
    ]
  )
  const results = checkThresholds(ts, { p99: 2500, wrong: 0, rate: 100, lost: 0 })
  assert.deepEqual(
    results.map((r) => r.passed),
    [false, true, true, true]
  )
  assert.equal(
    checkThresholds([parseThreshold('p50<10')], { p50: NaN })[0].passed,
    false,
    'no figure (no answers) fails'
  )
})

test('a threshold that cannot be read names the problem', () => {
  assert.throws(() => parseThreshold('p99 < soon'), /expected METRIC OP NUMBER/)
  assert.throws(() => parseThreshold('p98<1'), /unknown metric p98 \(known: p50/)
})
