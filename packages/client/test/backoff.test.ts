import { test } from 'node:test'
import assert from 'node:assert/strict'
import { backoffDelayMs, parseRetryAfterMs, DEFAULT_RETRY } from '@sandfleet/client'

test('backoff grows exponentially under full jitter and is capped', () => {
  const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1000 }
  assert.equal(
    backoffDelayMs(policy, 1, 0, () => 0.999),
    99
  )
  assert.equal(
    backoffDelayMs(policy, 3, 0, () => 0.5),
    200
  )
  assert.equal(
    backoffDelayMs(policy, 10, 0, () => 0.999),
    999
  )
  assert.equal(
    backoffDelayMs(policy, 1, 0, () => 0),
    0
  )
})

test('Retry-After is a floor on the delay', () => {
  assert.equal(
    backoffDelayMs(DEFAULT_RETRY, 1, 1500, () => 0),
    1500
  )
})

test('Retry-After parses seconds and HTTP dates, ignores garbage', () => {
  assert.equal(parseRetryAfterMs('2'), 2000)
  assert.equal(parseRetryAfterMs('0.25'), 250)
  assert.equal(parseRetryAfterMs(undefined), 0)
  assert.equal(parseRetryAfterMs('soon'), 0)
  const now = Date.parse('2026-01-01T00:00:00Z')
  assert.equal(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now), 3000)
})
