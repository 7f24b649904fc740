import { test } from 'node:test'
import assert from 'node:assert/strict'
import { nestsDeeperThan } from '../src/index.ts'

test('nestsDeeperThan counts arrays and objects, not scalars', () => {
  assert.equal(nestsDeeperThan('text', 0), false)
  assert.equal(nestsDeeperThan({}, 1), false)
  assert.equal(nestsDeeperThan({}, 0), true)
  assert.equal(nestsDeeperThan([[1, 'x', null]], 2), false)
  assert.equal(nestsDeeperThan([[1, 'x', [null]]], 2), true)
  assert.equal(nestsDeeperThan({ a: 1, b: { c: [{}] } }, 3), true)
  assert.equal(nestsDeeperThan({ a: 1, b: { c: [{}] } }, 4), false)
})

test('nestsDeeperThan walks 100,000 levels without a stack overflow', () => {
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown
  assert.equal(nestsDeeperThan(deep, 64), true)
  assert.equal(nestsDeeperThan(deep, 100_000), false)
})
