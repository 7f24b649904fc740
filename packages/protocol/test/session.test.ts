import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Value } from '@sinclair/typebox/value'
import { decodeSessionId, encodeSessionId, ExecResultSchema, failedResult } from '@sandfleet/protocol'

test('a session id names its runner, whatever characters the runner id holds', () => {
  for (const runner of ['runner-0', 'sandfleet-runner-7.sandfleet.svc', 'r.with.dots', 'ünï']) {
    const id = encodeSessionId(runner, '0123456789abcdef')
    assert.deepEqual(decodeSessionId(id), { runner, nonce: '0123456789abcdef' })
  }
})

test('ids sandfleet did not make decode to undefined', () => {
  for (const id of ['', 'abc', '.abc', 'abc.', '!!.abc', 'cnVubmVy.a/b', 'cnVubmVy=.abc']) {
    assert.equal(decodeSessionId(id), undefined, id)
  }
})

test('ExecResult accepts the optional display field and rejects a malformed one', () => {
  const ok = { ...failedResult('ok', 'x', 'y'), error: null, display: [{ 'text/plain': '42' }] }
  assert.equal(Value.Check(ExecResultSchema, ok), true)
  assert.equal(Value.Check(ExecResultSchema, { ...ok, display: [{ 'text/plain': 42 }] }), false)
})
