import { test } from 'node:test'
import assert from 'node:assert/strict'
import { classLatencies, efficiencyFigures, efficiencyRows, runCpu } from '../../src/run/efficiency.ts'
import { parseThreshold } from '../../src/run/thresholds.ts'

test("the useful share is the calls' own CPU over all the fleet's; without a measurement the report says why", () => {
  const cpu = runCpu(750, 100, { processesMs: 800, containersMs: 200, totalMs: 1000 })
  assert.deepEqual(cpu, {
    callsMs: 750,
    measuredCalls: 100,
    fleetMs: 1000,
    processesMs: 800,
    containersMs: 200,
    usefulShare: 0.75
  })
  const rows = Object.fromEntries(efficiencyRows({ cpu }))
  assert.equal(rows["the calls' own CPU (sum of cpu_ms)"], '750 ms over 100 calls')
  assert.equal(
    rows["the fleet's CPU (gateway, runner, sandboxes, zygotes, replacements)"],
    '1,000 ms (processes 800 ms, containers 200 ms)'
  )
  assert.equal(rows["useful share (the calls' CPU ÷ the fleet's)"], '75.0 %')
  assert.equal(efficiencyFigures({ cpu }).useful_share_pct, 75)
  const peer = runCpu(0, 0, 'the fleet is not one this harness started (--url)')
  assert.deepEqual([peer.fleetMs, peer.usefulShare], [null, null])
  const peerRows = Object.fromEntries(efficiencyRows({ cpu: peer }))
  assert.equal(peerRows["the fleet's CPU"], 'not measured: the fleet is not one this harness started (--url)')
  assert.equal(peerRows["useful share (the calls' CPU ÷ the fleet's)"], 'n/a')
  assert.equal(
    efficiencyFigures({ cpu: peer }).useful_share_pct,
    null,
    'a threshold on it fails rather than pass unmeasured'
  )
  assert.equal(
    runCpu(0, 0, { processesMs: 500, totalMs: 500 }).usefulShare,
    null,
    'no result carried a cpu_ms: no share'
  )
})

test('replacements by reason and the latency of each class are rows of the report; a threshold may name useful_share_pct and replacements', () => {
  const classes = classLatencies(
    new Map([
      ['timeout', [800, 900]],
      ['short', [1, 2, 3, 4]],
      ['long', [2000]]
    ])
  )
  assert.deepEqual(
    classes.map((c) => [c.class, c.calls, c.p50, c.p99]),
    [
      ['short', 4, 2, 4],
      ['long', 1, 2000, 2000],
      ['timeout', 2, 800, 900]
    ]
  )
  const rows = Object.fromEntries(efficiencyRows({ classes, replacements: { unswept: 2, max_jobs: 1 } }))
  assert.equal(rows['sandboxes replaced, by reason'], 'unswept 2, max_jobs 1')
  assert.equal(
    rows['latency p50 / p99 by class'],
    'short (4) 2 / 4 ms; long (1) 2,000 / 2,000 ms; timeout (2) 800 / 900 ms'
  )
  assert.equal(Object.fromEntries(efficiencyRows({ replacements: {} }))['sandboxes replaced, by reason'], 'none')
  assert.equal(
    efficiencyRows({ classes: classLatencies(new Map([['short', [1]]])) }).length,
    0,
    "one class: its latency is the run's"
  )
  assert.equal(efficiencyFigures({ replacements: { unswept: 2, max_jobs: 1 } }).replacements, 3)
  assert.equal(parseThreshold('useful_share_pct>=75').metric, 'useful_share_pct')
  assert.equal(parseThreshold('replacements==0').metric, 'replacements')
})
