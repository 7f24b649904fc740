import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { RUNNER_ERRORS, RunnerError } from '../src/errors.ts'

test('errors: every runner code is documented in docs/errors.md, and the count is pinned', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8')
  const codes = Object.keys(RUNNER_ERRORS)
  assert.equal(codes.length, 51, 'adding a code? document it and update this count; never reuse a retired one')
  for (const code of codes) {
    assert.match(code, /^SF_ERR_(RUNNER|EXECUTOR|SESSION|SANDBOX)_[A-Z_]+$/)
    assert.ok(doc.includes(`\`${code}\``), `${code} is missing from docs/errors.md`)
  }
})

test('errors: a RunnerError carries its code, HTTP status, result status and cause', () => {
  const cause = new Error('root')
  const err = new RunnerError('SF_ERR_RUNNER_OVERLOADED', undefined, { cause })
  assert.equal(err.code, 'SF_ERR_RUNNER_OVERLOADED')
  assert.equal(err.statusCode, 429)
  assert.equal(err.status, 'overloaded')
  assert.equal(err.cause, cause)
})
