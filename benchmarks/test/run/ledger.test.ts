import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Ledger } from '../../src/run/ledger.ts'

test('the ledger tells right, wrong, failed, lost, duplicated and misrouted answers apart, by nonce', () => {
  const ledger = new Ledger('run1')
  const calls = [
    ledger.add({ code: 'print(2)', status: 'ok', stdout: '2\n' }),
    ledger.add({ code: '1/0', status: 'error', stdout: '' }),
    ledger.add({ code: 'print(3)', status: 'ok', stdout: '3\n' }),
    ledger.add({ code: 'print(4)', status: 'ok', stdout: '4\n' }),
    ledger.add({ code: 'print(5)', status: 'ok', stdout: '5\n' }),
    ledger.add({ code: 'print(6)', status: 'ok', stdout: '6\n' })
  ]
  assert.deepEqual(
    calls.map((c) => c.nonce),
    ['run1-0', 'run1-1', 'run1-2', 'run1-3', 'run1-4', 'run1-5']
  )
  assert.equal(ledger.answer(0, { nonce: 'run1-0', status: 'ok', stdout: '2\n' }, 5), 'right')
  assert.equal(
    ledger.answer(1, { nonce: 'run1-1', status: 'error', stdout: '' }, 5),
    'right',
    'an expected error is a right answer'
  )
  assert.equal(ledger.answer(2, { nonce: 'run1-2', status: 'ok', stdout: '4\n' }, 5), 'wrong')
  assert.equal(ledger.answer(0, { nonce: 'run1-0', status: 'ok', stdout: '2\n' }, 5), 'duplicated')
  assert.equal(
    ledger.answer(3, { nonce: 'run1-4', status: 'ok', stdout: '5\n' }, 5),
    'misrouted',
    "an answer carrying another call's nonce does not answer this one"
  )
  assert.equal(ledger.answer(3, { nonce: 'other-3', status: 'ok', stdout: '4\n' }, 5), 'misrouted')
  assert.equal(ledger.fail(4, 'http_429', 7), 'failed')
  assert.equal(
    ledger.answer(5, { status: 'queue_timeout', stdout: '' }, 9),
    'failed',
    'an answer without a nonce is matched by its position'
  )
  const a = ledger.accounting()
  assert.equal(a.calls, 6)
  assert.equal(a.answered, 5)
  assert.equal(a.right, 2)
  assert.equal(a.wrong, 1)
  assert.deepEqual(a.wrongBy, { stdout: 1 })
  assert.equal(a.failed, 2)
  assert.equal(a.retriable, 2)
  assert.equal(a.lost, 1, 'call 3 got only answers that were not its own')
  assert.equal(a.duplicated, 1)
  assert.equal(a.misrouted, 2)
  assert.deepEqual(a.statuses, { ok: 2, error: 1, http_429: 1, queue_timeout: 1 })
  assert.equal(ledger.latencyMs.length, 5)
})

test('a status of the code that is not the expected one is wrong, named by what was expected', () => {
  const ledger = new Ledger('r')
  ledger.add({ code: 'while True: pass', status: 'timeout', stdout: '' })
  assert.equal(ledger.answer(0, { nonce: 'r-0', status: 'ok', stdout: '' }, 1), 'wrong')
  assert.deepEqual(ledger.accounting().wrongBy, { 'expected timeout, got ok': 1 })
})

test("a status among the call's accepted others is right (a race between a deadline and a limit)", () => {
  const ledger = new Ledger('r')
  ledger.add({ code: 'a = []\nwhile True: a.append(1)', status: 'memory', accept: ['timeout'] })
  ledger.add({ code: 'a = []\nwhile True: a.append(1)', status: 'memory', accept: ['timeout'] })
  assert.equal(ledger.answer(0, { nonce: 'r-0', status: 'timeout', stdout: '' }, 1), 'right')
  assert.equal(ledger.answer(1, { nonce: 'r-1', status: 'killed', stdout: '' }, 1), 'wrong')
})

test("the ledger sums the cpu_ms of first answers (the calls' own CPU) and keeps latencies by the class of each call", () => {
  const ledger = new Ledger('r')
  ledger.add({ code: 'print(1)', status: 'ok', stdout: '1\n' })
  ledger.add({ code: 'while True: pass', status: 'timeout', stdout: '' })
  ledger.add({ code: 'long', status: 'ok', stdout: 'long done\n', kind: 'long' })
  ledger.add({ code: 'print(2)', status: 'ok', stdout: '2\n' })
  ledger.answer(0, { nonce: 'r-0', status: 'ok', stdout: '1\n', cpuMs: 1.5 }, 4)
  ledger.answer(0, { nonce: 'r-0', status: 'ok', stdout: '1\n', cpuMs: 100 }, 4)
  ledger.answer(1, { nonce: 'r-1', status: 'timeout', stdout: '', cpuMs: 300 }, 800)
  ledger.answer(2, { nonce: 'r-2', status: 'ok', stdout: 'long done\n', cpuMs: 1000 }, 2500)
  ledger.answer(3, { nonce: 'r-3', status: 'ok', stdout: '2\n' }, 6)
  assert.deepEqual(
    [ledger.callCpuMs, ledger.measuredCalls],
    [1301.5, 3],
    "a duplicate's cpu_ms is not counted; an answer without one counts no CPU"
  )
  assert.deepEqual(Object.fromEntries(ledger.latencyByClass), { short: [4, 6], timeout: [800], long: [2500] })
})
