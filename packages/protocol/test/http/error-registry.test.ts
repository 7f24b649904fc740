import { test } from 'node:test'
import assert from 'node:assert/strict'
import { RegisteredError, errorBody, type ErrorRegistry } from '../../src/http/index.ts'

const ERRORS = {
  SF_ERR_TEST_FULL: { statusCode: 429, status: 'overloaded', message: 'The queue is full' },
  SF_ERR_TEST_BAD: { statusCode: 400, status: 'invalid_request', message: 'Bad input' }
} satisfies ErrorRegistry

test('an error of a registry carries its code, HTTP status, protocol status, field and cause, and its ErrorBody', () => {
  const cause = new Error('root')
  const err = new RegisteredError(ERRORS, 'SF_ERR_TEST_BAD', 'timeout_ms must be positive', {
    field: 'timeout_ms',
    cause
  })
  assert.deepEqual(
    [err.code, err.statusCode, err.status, err.field, err.cause],
    ['SF_ERR_TEST_BAD', 400, 'invalid_request', 'timeout_ms', cause]
  )
  assert.deepEqual(err.toBody(), {
    status: 'invalid_request',
    error: { code: 'SF_ERR_TEST_BAD', message: 'timeout_ms must be positive', field: 'timeout_ms' }
  })
  const plain = new RegisteredError(ERRORS, 'SF_ERR_TEST_FULL')
  assert.deepEqual(
    plain.toBody(),
    { status: 'overloaded', error: { code: 'SF_ERR_TEST_FULL', message: 'The queue is full' } },
    'the default message, no field'
  )
})

test("errorBody gives the registry's status and default message, and names a field only when there is one", () => {
  assert.deepEqual(errorBody(ERRORS, 'SF_ERR_TEST_FULL'), {
    status: 'overloaded',
    error: { code: 'SF_ERR_TEST_FULL', message: 'The queue is full' }
  })
  assert.deepEqual(errorBody(ERRORS, 'SF_ERR_TEST_BAD', 'no', ''), {
    status: 'invalid_request',
    error: { code: 'SF_ERR_TEST_BAD', message: 'no' }
  })
  assert.equal(errorBody(ERRORS, 'SF_ERR_TEST_BAD', 'no', 'code').error.field, 'code')
})
