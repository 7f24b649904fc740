import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { decodeSessionId } from '@sandfleet/protocol'
import { SessionHost } from '../../src/sessions/session-host.ts'

let host: SessionHost
before(async () => {
  host = new SessionHost({ runnerId: 'runner-t', sweepMs: 50, maxSessionsPerKey: 3 })
  await host.start()
})
after(async () => { await host.shutdown() })

test('session state persists across 3 calls: variables, imports, functions, files', async () => {
  const s = await host.create({ ttl_s: 60 })
  assert.equal(decodeSessionId(s.session_id)?.runner, 'runner-t')
  await host.execute(s.session_id, { code: 'import math\nx = 40\ndef f(v): return v + 2\nopen("note.txt", "w").write("kept")' })
  const second = await host.execute(s.session_id, { code: 'x = f(x)\nprint(math.floor(x))' })
  assert.equal(second.stdout, '42\n')
  const third = await host.execute(s.session_id, { code: 'open("note.txt").read()' })
  assert.deepEqual(third.display, [{ 'text/plain': "'kept'" }])
  assert.equal(host.get(s.session_id).cells, 3)
  await host.close(s.session_id)
})

test('a cell ending in an expression returns its repr; an exception reports the user frames', async () => {
  const s = await host.create()
  assert.deepEqual((await host.execute(s.session_id, { code: 'y = [1, 2]\ny' })).display, [{ 'text/plain': '[1, 2]' }])
  const err = await host.execute(s.session_id, { code: '1/0' })
  assert.equal(err.status, 'error')
  assert.equal(err.error?.type, 'ZeroDivisionError')
  assert.match(err.stderr, /ZeroDivisionError/)
  await host.close(s.session_id)
})

test('a cell timeout kills only that cell: the state from before it survives', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 1' })
  const slow = await host.execute(s.session_id, { code: 'x = 99\nwhile True: pass', timeout_ms: 300 })
  assert.equal(slow.status, 'timeout')
  assert.deepEqual((await host.execute(s.session_id, { code: 'x' })).display, [{ 'text/plain': '1' }])
  await host.close(s.session_id)
})

test('an idle session expires after its TTL', async () => {
  const s = await host.create({ ttl_s: 1 })
  await sleep(1300)
  assert.throws(() => host.get(s.session_id), { code: 'SF_ERR_SESSION_NOT_FOUND' })
})

test('a session whose process was killed answers session lost (410), never a fresh state', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 1' })
  await host.crash(s.session_id)
  await assert.rejects(host.execute(s.session_id, { code: 'x' }), { code: 'SF_ERR_SESSION_LOST', statusCode: 410 })
  assert.throws(() => host.get(s.session_id), { code: 'SF_ERR_SESSION_LOST' })
})

test('the per-key session limit refuses one more', async () => {
  const ids = []
  for (let i = 0; i < 3; i++) ids.push((await host.create({}, 'k')).session_id)
  await assert.rejects(host.create({}, 'k'), { code: 'SF_ERR_SESSION_LIMIT', statusCode: 429 })
  for (const id of ids) await host.close(id)
})
