import { test } from 'node:test'
import assert from 'node:assert/strict'
import { forkProbe } from '../src/environment.ts'
import { environmentBlock } from '../src/report.ts'

test('the fork probe times real forks of python3, and says nothing without python3', () => {
  const us = forkProbe(20)
  assert.ok(us !== undefined && Number.isInteger(us) && us > 0, `fork probe: ${String(us)}`)
  assert.equal(forkProbe(20, '/nonexistent/python3'), undefined)
})

test('the environment block names the fork probe beside the load', () => {
  const block = environmentBlock({
    date: '2026-12-03T00:00:00.000Z',
    commit: 'abc1234',
    command: 'npm run bench -- suite',
    machine: {
      cores: 2,
      cpu: 'AMD EPYC',
      memoryGiB: 23.5,
      kernel: 'linux 6.18',
      node: 'v20.20.2',
      loadAverage1m: 1.5,
      backgroundBusyPct: 3,
      forkProbeUs: 612
    }
  })
  assert.match(block, /load average 1\.5 at start, CPU 3 % busy/)
  assert.match(block, /fork probe 612 µs/)
})
