import { test } from 'node:test'
import assert from 'node:assert/strict'
import { drawCalls, parseJsonl, rlHostile, rlMix } from '../../src/workloads/calls.ts'
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
  assert.ok(a.every((c) => c.stdout !== undefined), 'every call of the mix has its expected stdout')
})

test("a user's JSONL gives calls with stdin and expectations; a bad line is named", () => {
  const calls = parseJsonl('{"code":"print(input())","stdin":"a","expect":"a\\n"}\n\n{"code":"1/0","expect":{"status":"error"}}\n{"code":"print(1)"}\n')
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

