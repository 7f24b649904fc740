import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runInNewContext } from 'node:vm'
import { messageOf } from '../../src/http/index.ts'

test("messageOf gives an error's message, of another realm too, and anything else as a string", () => {
  assert.equal(messageOf(new TypeError('x is undefined')), 'x is undefined')
  assert.equal(messageOf(runInNewContext('new Error("from a context")')), 'from a context')
  assert.equal(messageOf('plain'), 'plain')
  assert.equal(messageOf(undefined), 'undefined')
  assert.equal(messageOf({ message: 7 }), '[object Object]')
})
