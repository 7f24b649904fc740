import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TenantQuota } from '../../src/tenants/tenant-quota.ts'

test('in-flight quota: calls are taken up to the bound, refused past it with the given Retry-After, given back on release', () => {
  const q = new TenantQuota(3, 0, () => 0)
  assert.equal(q.tryTake(2, 1), undefined)
  assert.equal(q.tryTake(1, 1), undefined)
  assert.deepEqual(q.tryTake(1, 7), { reason: 'in_flight', retryAfterS: 7 })
  assert.equal(q.inFlight, 3, 'a refusal takes nothing')
  q.release(2)
  assert.equal(q.tryTake(2, 1), undefined)
  assert.equal(q.inFlight, 3)
})

test('in-flight quota: a batch larger than the bound passes only when the tenant holds nothing', () => {
  const q = new TenantQuota(4, 0, () => 0)
  assert.equal(q.tryTake(1, 1), undefined)
  assert.equal(q.tryTake(10, 1)?.reason, 'in_flight')
  q.release(1)
  assert.equal(q.tryTake(10, 1), undefined)
  assert.equal(q.tryTake(1, 1)?.reason, 'in_flight')
})

test('rate quota: a bucket of one second of calls, refilled with time; Retry-After is the wait for the calls asked', () => {
  let now = 0
  const q = new TenantQuota(0, 4, () => now)
  for (let i = 0; i < 4; i++) assert.equal(q.tryTake(1, 1), undefined, `call ${i} of the burst`)
  assert.deepEqual(q.tryTake(1, 1), { reason: 'rate', retryAfterS: 1 })
  now = 250 // one call refilled
  assert.equal(q.tryTake(1, 1), undefined)
  assert.equal(q.tryTake(1, 1)?.reason, 'rate')
  now = 10_000 // never more than the bucket holds
  assert.equal(q.tokens, 4)
  assert.equal(q.inFlight, 5, 'every call taken is held until released')
})

test('rate quota: a batch larger than the bucket passes when it is full, and its debt is waited out', () => {
  let now = 0
  const q = new TenantQuota(0, 2, () => now)
  assert.equal(q.tryTake(10, 1), undefined)
  assert.equal(q.tokens, -8)
  assert.deepEqual(q.tryTake(1, 1), { reason: 'rate', retryAfterS: 5 }, '(1 - -8) / 2 s, rounded up')
  now = 4_000
  assert.equal(q.tryTake(1, 1)?.reason, 'rate')
  now = 4_500
  assert.equal(q.tryTake(1, 1), undefined)
})

test('no bounds: 0 and 0 take anything', () => {
  const q = new TenantQuota(0, 0, () => 0)
  for (let i = 0; i < 1000; i++) assert.equal(q.tryTake(100, 1), undefined)
  assert.equal(q.inFlight, 100_000)
})
