import { test } from 'node:test'
import assert from 'node:assert/strict'
import { failedResult, resolveExecRequest, type ExecResult } from '@sandfleet/protocol'
import { CallMemory, requestDigest } from '../../src/runner/call-memory.ts'

const ok = (stdout: string): ExecResult => ({ ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout })
const digest = (code: string): string => requestDigest(resolveExecRequest({ code }))

test('a finished call is answered from memory, replayed; a running one is waited for', async () => {
  const memory = new CallMemory({ maxCalls: 10, windowMs: 60_000 })
  const first = memory.begin('t\0id-1', digest('print(1)'))
  assert.equal(first.kind, 'run')
  const during = memory.begin('t\0id-1', digest('print(1)'))
  assert.equal(during.kind, 'replay')
  if (first.kind !== 'run' || during.kind !== 'replay') return
  first.settle(ok('1\n'))
  assert.deepEqual(await during.answer, { ...ok('1\n'), replayed: true })
  const after = memory.begin('t\0id-1', digest('print(1)'))
  assert.equal(after.kind, 'replay')
  if (after.kind === 'replay') assert.deepEqual(await after.answer, { ...ok('1\n'), replayed: true })
})

test('another request under the same id is not a retry: it runs; a call that surely did not run is forgotten', async () => {
  const memory = new CallMemory({ maxCalls: 10, windowMs: 60_000 })
  const a = memory.begin('k', digest('print(1)'))
  if (a.kind === 'run') a.settle(ok('1\n'))
  assert.equal(memory.begin('k', digest('print(2)')).kind, 'run', 'same id, other code')
  const queued = memory.begin('q', digest('print(3)'))
  assert.equal(queued.kind, 'run')
  if (queued.kind === 'run') queued.settle({ ...failedResult('queue_timeout', 'SF_ERR_X', 'waited'), maybe_ran: false })
  assert.equal(memory.begin('q', digest('print(3)')).kind, 'run', 'it never ran: its retry runs it')
})

test('the memory is bounded: by count, by its window, per tenant', async () => {
  const memory = new CallMemory({ maxCalls: 2, windowMs: 50 })
  for (const id of ['a', 'b', 'c']) {
    const r = memory.begin(CallMemory.keyOf(id, 'team') as string, digest(id))
    if (r.kind === 'run') r.settle(ok(id))
  }
  assert.equal(memory.size, 2)
  assert.equal(memory.begin(CallMemory.keyOf('a', 'team') as string, digest('a')).kind, 'run', 'the oldest forgotten')
  assert.equal(memory.begin(CallMemory.keyOf('c', 'other') as string, digest('c')).kind, 'run', "another tenant's id")
  await new Promise((resolve) => setTimeout(resolve, 120))
  assert.equal(memory.begin(CallMemory.keyOf('c', 'team') as string, digest('c')).kind, 'run', 'past the window')
  assert.equal(CallMemory.keyOf(undefined, 'team'), undefined, 'a call without an id is not remembered')
})

test('the digest covers what runs: code, stdin, limits, files (in any order)', () => {
  const base = resolveExecRequest({ code: 'x', files: { a: 'YQ==', b: 'Yg==' } })
  const same = resolveExecRequest({ code: 'x', files: { b: 'Yg==', a: 'YQ==' } })
  assert.equal(requestDigest(base), requestDigest(same))
  for (const other of [
    { code: 'y' },
    { code: 'x', stdin: 'i' },
    { code: 'x', timeout_ms: 5 },
    { code: 'x', files: { a: 'Yg==' } }
  ])
    assert.notEqual(requestDigest(resolveExecRequest(other)), requestDigest(base), JSON.stringify(other))
})
