import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import {
  RL_STEP_DEFAULTS,
  classOf,
  describeWorkload,
  drawCalls,
  longCall,
  parseJsonl,
  rlHostile,
  rlMix,
  rlStep
} from '../../src/workloads/calls.ts'
import { HOSTILE_CALLS } from '../../src/workloads/hostile-calls.ts'
import { RL_MATH_CORPUS } from '../../src/workloads/rl-math-corpus.ts'

test('the RL mix is drawn with a seed: the same seed, the same calls; mostly ok, some errors, a few timeouts', () => {
  assert.ok(RL_MATH_CORPUS.length >= 40)
  const a = rlMix(5000, 7)
  assert.deepEqual(a, rlMix(5000, 7))
  assert.notDeepEqual(a.slice(0, 50), rlMix(50, 8))
  const by = (s: string): number => a.filter((c) => c.status === s).length / a.length
  assert.ok(by('ok') > 0.8, `ok share ${by('ok')}`)
  assert.ok(by('error') > 0.02 && by('error') < 0.15, `error share ${by('error')}`)
  assert.ok(by('timeout') > 0 && by('timeout') < 0.01, `timeout share ${by('timeout')}`)
  assert.ok(
    a.every((c) => c.stdout !== undefined),
    'every call of the mix has its expected stdout'
  )
})

test("a user's JSONL gives calls with stdin and expectations; a bad line is named", () => {
  const calls = parseJsonl(
    '{"code":"print(input())","stdin":"a","expect":"a\\n"}\n\n{"code":"1/0","expect":{"status":"error"}}\n{"code":"print(1)"}\n'
  )
  assert.deepEqual(calls, [
    { code: 'print(input())', status: 'ok', stdin: 'a', stdout: 'a\n' },
    { code: '1/0', status: 'error' },
    { code: 'print(1)', status: 'ok' }
  ])
  assert.throws(() => parseJsonl('{"code":"x"}\n{"cod":"y"}', 'calls.jsonl'), /calls\.jsonl:2: needs "code"/)
  assert.throws(() => parseJsonl('nope', 'f'), /f:1: not JSON/)
  assert.equal(drawCalls({ name: 'trivial', seed: 1, sleepS: 0.3 }, 3).length, 3)
})

test('rl-hostile is the RL mix with a seeded share of hostile calls in it', () => {
  const calls = rlHostile(20_000, 3, 0.05)
  const hostile = calls.filter((c) => HOSTILE_CALLS.includes(c as never)).length
  assert.ok(hostile > 800 && hostile < 1200, `about 5 %: ${hostile}`)
  assert.deepEqual(rlHostile(500, 3, 0.05), calls.slice(0, 500), 'the same seed, the same calls')
  assert.equal(drawCalls({ name: 'rl-hostile', seed: 3, sleepS: 0.3 }, 20_000).length, 20_000)
  assert.ok(HOSTILE_CALLS.length >= 15 && new Set(HOSTILE_CALLS.map((c) => c.name)).size === HOSTILE_CALLS.length)
})

test("rl-step is the RL mix's calls that end on their own, with seeded shares of time-outs and long calls, each call classed", () => {
  const calls = rlStep(20_000, 5)
  assert.deepEqual(rlStep(500, 5), calls.slice(0, 500), 'the same seed, the same calls')
  const share = (k: string): number => calls.filter((c) => classOf(c) === k).length / calls.length
  assert.ok(
    Math.abs(share('timeout') - RL_STEP_DEFAULTS.timeoutShare) < 0.006,
    `about 3 % time-outs: ${share('timeout')}`
  )
  assert.ok(Math.abs(share('long') - RL_STEP_DEFAULTS.longShare) < 0.005, `about 2 % long calls: ${share('long')}`)
  const timeouts = calls.filter((c) => classOf(c) === 'timeout')
  assert.ok(
    timeouts.every((c) => c.status === 'timeout' && c.timeoutMs === 300),
    "at the runaway calls' own timeout_ms"
  )
  assert.ok(
    calls.filter((c) => classOf(c) === 'short').every((c) => c.status !== 'timeout'),
    'no other call runs until its deadline'
  )
  const shaped = rlStep(5000, 5, { timeoutShare: 0.1, timeoutMs: 700, longShare: 0, longMs: 10 })
  assert.ok(shaped.filter((c) => c.status === 'timeout').every((c) => c.timeoutMs === 700))
  assert.equal(shaped.filter((c) => classOf(c) === 'long').length, 0)
  assert.deepEqual(drawCalls({ name: 'rl-step', seed: 5, sleepS: 0.3 }, 500), calls.slice(0, 500))
  assert.match(
    describeWorkload({ name: 'rl-step', seed: 5, sleepS: 0.3, step: { timeoutShare: 0.1 } }),
    /10 % time-outs \(at their own timeout_ms\), 2 % long calls of 1000 ms of CPU, seed 5/
  )
})

test('a long call computes its CPU milliseconds and answers long done, within a deadline that leaves it room', () => {
  const call = longCall(50)
  assert.deepEqual([call.status, call.stdout, call.kind], ['ok', 'long done\n', 'long'])
  assert.ok((call.timeoutMs ?? 0) >= 30_000)
  const run = spawnSync(
    'python3',
    ['-c', `import time\nt0 = time.process_time()\n${call.code}\nprint(time.process_time() - t0 >= 0.05)`],
    { encoding: 'utf8', timeout: 60_000 }
  )
  assert.equal(run.stdout, 'long done\nTrue\n', run.stderr)
})
