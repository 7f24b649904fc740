import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { CLIENT_ERROR_CODES } from '@sandfleet/client'

test('client error codes are unique, prefixed and documented in docs/errors.md', () => {
  const codes = Object.values(CLIENT_ERROR_CODES)
  assert.equal(codes.length, 8, 'pinned count: a new code must be documented too')
  assert.equal(new Set(codes).size, codes.length)
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8')
  for (const code of codes) {
    assert.match(code, /^SF_ERR_CLIENT_[A-Z_]+$/)
    assert.ok(doc.includes(`\`${code}\``), `${code} documented`)
  }
})
