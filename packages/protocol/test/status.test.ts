import { test } from 'node:test'
import assert from 'node:assert/strict'
import { STATUSES, isRetriable, isToolError, isUserStatus } from '../src/index.ts'

test('the fleet statuses, and only they, are retriable', () => {
  assert.deepEqual(STATUSES.filter(isRetriable), ['overloaded', 'queue_timeout', 'infra_error'])
})

test('a tool error is a user status other than ok: infrastructure faults never count against the model', () => {
  assert.deepEqual(STATUSES.filter(isToolError), ['error', 'timeout', 'memory', 'killed'])
  assert.equal(isUserStatus('infra_error'), false)
  assert.equal(isToolError('invalid_request'), false)
})
