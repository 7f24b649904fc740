import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RETIRE_REASONS, retireReasonOf } from '../../src/sandbox/retire-reasons.ts'

test('retire reasons: a known word is kept; anything else a sandbox sends is counted as other', () => {
  for (const reason of RETIRE_REASONS) assert.equal(retireReasonOf(reason), reason)
  for (const sent of [
    'timeout',
    'Unswept',
    'unswept ',
    'a'.repeat(300),
    '',
    7,
    null,
    undefined,
    { toString: () => 'oom' }
  ]) {
    assert.equal(retireReasonOf(sent), 'other', JSON.stringify(String(sent)).slice(0, 40))
  }
  assert.ok(
    RETIRE_REASONS.every((r) => /^[a-z_]{1,24}$/.test(r)),
    'every reason is a short lowercase word'
  )
  assert.equal(new Set(RETIRE_REASONS).size, RETIRE_REASONS.length)
})
