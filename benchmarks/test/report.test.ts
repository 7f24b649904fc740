import { test } from 'node:test'
import assert from 'node:assert/strict'
import { figuresTable, formatNumber, runsTable, verdict } from '../src/report.ts'
import type { LoadReport } from '../src/load.ts'

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

test("the runs table names each run's workload when the runs name theirs (the isolation scenario's two kinds of call)", () => {
  const report = {
    concurrency: 64,
    callsPerRequest: 1,
    okCallsPerS: 100,
    latencyMs: { p50: 1, p90: 2, p99: 3 },
    runMs: { p50: 1 },
    queueMs: { p50: 0 },
    failures: 0,
    counts: { ok: 10 },
    serverCpuMsPerCall: undefined,
    usefulShare: undefined
  } as unknown as LoadReport
  const named = runsTable([
    { scenario: 'isolation 1', workload: 'print(1+1) at concurrency 64', server: 'sandfleet, fork', report },
    { scenario: 'isolation 1', workload: 'sympy.factor at concurrency 64', server: 'sandfleet, fork', report }
  ]).split('\n')
  assert.match(named[0], /^\| scenario \| workload \| server \|/)
  assert.match(named[2], /^\| isolation 1 \| print\(1\+1\) at concurrency 64 \| sandfleet, fork \|/)
  assert.match(named[3], /^\| isolation 1 \| sympy\.factor at concurrency 64 \| sandfleet, fork \|/)
  assert.equal(named[0].split('|').length, named[1].split('|').length, 'as many columns in the header as below it')
  const plain = runsTable([{ scenario: 'trivial-c64', server: 'sandfleet', report }]).split('\n')
  assert.match(plain[0], /^\| scenario \| server \|/, 'no workload column when no run names one')
})
