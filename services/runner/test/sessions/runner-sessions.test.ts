import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Runner } from '../../src/runner/runner.ts'
import { runnerConfig } from '../../src/config.ts'
import { listenRunner } from '../../src/main.ts'
import { silentLogger } from '../../src/logger.ts'
import { RUNNER_SESSION_PATHS } from '@sandfleet/protocol'

test('a runner whose Python backend holds no sessions (pyodide) runs them under bubblewrap instead', async () => {
  const runner = new Runner(
    runnerConfig({ backend: 'pyodide', languages: ['python'], poolSize: 1, id: 'sessions-fallback' })
  )
  try {
    await runner.start()
    assert.equal(runner.load().backend, 'pyodide')
    const sessions = runner.sessions
    assert.ok(sessions !== undefined, 'sessions are enabled')
    const s = await sessions.create({})
    await sessions.execute(s.session_id, { code: 'import os\nuid = os.getuid()' })
    const r = await sessions.execute(s.session_id, { code: 'uid' })
    assert.deepEqual(r.display, [{ 'text/plain': '65534' }], 'the session runs sandboxed as uid 65534')
    assert.equal(runner.load().sessions, 1)
  } finally {
    await runner.close()
  }
})

test('maxSessions 0 disables sessions', async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1, maxSessions: 0, id: 'sessions-off' }))
  try {
    await runner.start()
    assert.equal(runner.sessions, undefined)
  } finally {
    await runner.close()
  }
})

test("a session cell over the runner's maxTimeoutMs is refused like any call: 400 naming timeout_ms, the session untouched", async () => {
  const server = await listenRunner(
    runnerConfig({
      backend: 'process',
      poolSize: 1,
      maxTimeoutMs: 2000,
      host: '127.0.0.1',
      port: 0,
      id: 'sessions-limits'
    }),
    { logger: silentLogger }
  )
  try {
    const post = async (path: string, body: object): Promise<{ status: number; body: any }> => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      return { status: res.status, body: await res.json() }
    }
    const opened = await post(RUNNER_SESSION_PATHS.create, {})
    assert.equal(opened.status, 201)
    const cell = RUNNER_SESSION_PATHS.execute.replace(':id', encodeURIComponent(opened.body.session_id))
    assert.equal((await post(cell, { code: 'n = 1', timeout_ms: 2000 })).body.status, 'ok')
    const over = await post(cell, { code: 'n = 2', timeout_ms: 2001 })
    assert.deepEqual(
      [over.status, over.body.error.code, over.body.error.field],
      [400, 'SF_ERR_RUNNER_LIMIT', 'timeout_ms'],
      JSON.stringify(over.body)
    )
    const after = await post(cell, { code: 'n', timeout_ms: 1000 })
    assert.deepEqual(after.body.display, [{ 'text/plain': '1' }], 'the refused cell did not run')
  } finally {
    await server.close()
  }
})
