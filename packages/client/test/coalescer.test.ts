import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { startFakeFleet } from '@sandfleet/client/testing'
import type { ExecResult } from '@sandfleet/protocol'

const ok = (stdout: string): ExecResult => ({
  status: 'ok',
  stdout,
  stderr: '',
  exit_code: 0,
  duration_ms: 1,
  queue_ms: 0,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {},
  runner: 'fake',
  sandbox: 'fake-0'
})

test('coalesced calls settle one by one: a slow call does not hold back the calls batched with it', async () => {
  let release!: () => void
  let released = false
  const gate = new Promise<void>((resolve) => {
    release = () => {
      released = true
      resolve()
    }
  })
  const guard = setTimeout(() => release(), 5000)
  const fleet = await startFakeFleet(async (req) => {
    if (req.code === 'slow') await gate
    return ok(req.code)
  })
  const client = new SandfleetClient({ url: fleet.url, batchWindowMs: 50 })
  try {
    const slow = client.execute({ code: 'slow' })
    const fast = await Promise.all(['a', 'b', 'c'].map(async (code) => await client.execute({ code })))
    assert.equal(released, false, 'the fast calls came back while the slow one was held')
    assert.deepEqual(
      fast.map((r) => r.stdout),
      ['a', 'b', 'c']
    )
    assert.deepEqual(
      fleet.log.map((e) => [e.path, e.items, e.accept]),
      [['/v1/execute/batch', 4, 'application/x-ndjson']],
      'one streamed batch'
    )
    release()
    assert.equal((await slow).stdout, 'slow')
  } finally {
    clearTimeout(guard)
    await client.close()
    await fleet.close()
  }
})
