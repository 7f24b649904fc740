import { test } from 'node:test'
import assert from 'node:assert/strict'
import { figuresTable, formatNumber, verdict } from '../src/report.ts'

test('verdict says met, or the factor a target is missed by, for floors and ceilings', () => {
  assert.equal(verdict({ scenario: 's', name: 'n', value: 1.5, unit: 'ms', target: { op: '<=', value: 2 } }), 'met')
  assert.equal(
    verdict({ scenario: 's', name: 'n', value: 5, unit: 'ms', target: { op: '<=', value: 2 } }),
    'missed by 2.50×'
  )
  assert.equal(
    verdict({ scenario: 's', name: 'n', value: 1200, unit: 'calls/s', target: { op: '>=', value: 1000 } }),
    'met'
  )
  assert.equal(
    verdict({ scenario: 's', name: 'n', value: 250, unit: 'calls/s', target: { op: '>=', value: 1000 } }),
    'missed by 4.00×'
  )
  assert.equal(
    verdict({ scenario: 's', name: 'n', value: 0, unit: 'calls/s', target: { op: '>=', value: 1000 } }),
    'missed (no value)'
  )
  assert.equal(
    verdict({ scenario: 's', name: 'n', value: NaN, unit: 's', target: { op: '<=', value: 0.5 } }),
    'missed (no value)'
  )
  assert.equal(verdict({ scenario: 's', name: 'n', value: 3, unit: '×' }), '')
})

test('figures render as a markdown table with the target beside the measurement', () => {
  const table = figuresTable([
    { scenario: 'trivial-c64', name: 'calls/s', value: 1234.4, unit: 'calls/s', target: { op: '>=', value: 1000 } }
  ])
  const lines = table.split('\n')
  assert.equal(lines.length, 3)
  assert.equal(lines[2], '| trivial-c64 | calls/s | 1,234 calls/s | ≥ 1,000 calls/s | met |')
  assert.equal(formatNumber(2.3456), '2.35')
  assert.equal(formatNumber(NaN), 'n/a')
})
