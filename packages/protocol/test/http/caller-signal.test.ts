import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { callerSignal } from '../../src/http/index.ts'

/** A response that closes, finished or not. */
function response(): EventEmitter & { writableFinished: boolean } {
  return Object.assign(new EventEmitter(), { writableFinished: false })
}

test('the signal aborts when the response closes before it finished (the caller hung up), not after it finished', () => {
  const hungUp = response()
  const early = callerSignal(hungUp)
  assert.equal(early.aborted, false)
  hungUp.emit('close')
  assert.equal(early.aborted, true)
  const answered = response()
  const late = callerSignal(answered)
  answered.writableFinished = true
  answered.emit('close')
  assert.equal(late.aborted, false)
})
