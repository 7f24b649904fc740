import { test } from 'node:test'
import assert from 'node:assert/strict'
import { normalizeAnswer } from '@sandfleet/trainer'

test('normalisation: sets of one element, the empty set, unit words after a number; an x = stays', () => {
  assert.equal(normalizeAnswer('\\{3\\}'), '3')
  assert.equal(normalizeAnswer('\\{\\frac{1}{2}\\}'), '\\frac{1}{2}')
  assert.equal(normalizeAnswer('\\{1, 2\\}'), '\\{1, 2\\}')
  assert.equal(normalizeAnswer('\\{ \\}'), '\\emptyset')
  assert.equal(normalizeAnswer('100 \\text{ mph}'), '100')
  assert.equal(normalizeAnswer('\\text{even}'), 'even', 'a word alone is the answer')
  assert.equal(normalizeAnswer('x = 5'), 'x = 5', 'whether it names a value is for the comparison')
  assert.equal(normalizeAnswer('x \\in [1, 2]'), '[1, 2]')
})
