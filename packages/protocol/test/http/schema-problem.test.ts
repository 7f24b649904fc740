import { test } from 'node:test'
import assert from 'node:assert/strict'
import { closestField, fieldOf, schemaProblem } from '../../src/http/index.ts'

test('fieldOf names the missing or unknown property itself, below the object that holds it', () => {
  assert.equal(fieldOf({ keyword: 'required', instancePath: '', params: { missingProperty: 'code' } }), 'code')
  assert.equal(
    fieldOf({ keyword: 'additionalProperties', instancePath: '/requests/3', params: { additionalProperty: 'extra' } }),
    'requests/3/extra'
  )
  assert.equal(
    fieldOf({ keyword: 'type', instancePath: '/requests/3/timeout_ms', params: { type: 'integer' } }),
    'requests/3/timeout_ms'
  )
})

test('schemaProblem gives the first problem as one line that starts with its field', () => {
  assert.deepEqual(schemaProblem([], 'body'), { field: '', message: 'invalid body' })
  assert.deepEqual(
    schemaProblem([{ keyword: 'type', instancePath: '', params: {}, message: 'must be object' }], 'body'),
    { field: '', message: 'body must be object' }
  )
  assert.deepEqual(
    schemaProblem([{ keyword: 'required', instancePath: '', params: { missingProperty: 'code' } }], 'body'),
    { field: 'code', message: 'code is required' }
  )
  assert.deepEqual(
    schemaProblem(
      [{ keyword: 'enum', instancePath: '/isolation', params: { allowedValues: ['fresh', 'reuse'] } }],
      'body'
    ),
    { field: 'isolation', message: 'isolation must be one of "fresh", "reuse"' }
  )
  const union = [
    { keyword: 'const', instancePath: '/language', params: { allowedValue: 'python' } },
    { keyword: 'const', instancePath: '/language', params: { allowedValue: 'javascript' } },
    { keyword: 'anyOf', instancePath: '/language', params: {} }
  ]
  assert.deepEqual(schemaProblem(union, 'body'), {
    field: 'language',
    message: 'language must be one of "python", "javascript"'
  })
})

test('an unknown field is answered with the known one it most likely meant, when one is near', () => {
  const known = ['language', 'code', 'stdin', 'timeout_ms', 'memory_mb', 'files', 'fetch_files', 'isolation']
  assert.equal(closestField('timeout', known), 'timeout_ms')
  assert.equal(closestField('langauge', known), 'language')
  assert.equal(closestField('Memory_MB', known), 'memory_mb')
  assert.equal(closestField('fetch_file', known), 'fetch_files')
  assert.equal(closestField('zzz', known), undefined)
  assert.equal(closestField('session', known), undefined)
  const parentSchema = { type: 'object', properties: Object.fromEntries(known.map((k) => [k, {}])) }
  assert.deepEqual(
    schemaProblem(
      [{ keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'timeout' }, parentSchema }],
      'body'
    ),
    { field: 'timeout', message: 'timeout is not a known field (did you mean timeout_ms?)' }
  )
})
