import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Runner } from '../../src/runner.ts'
import { runnerConfig } from '../../src/config.ts'

test('a runner whose Python backend holds no sessions (pyodide) runs them under bubblewrap instead', async () => {
  const runner = new Runner(runnerConfig({ backend: 'pyodide', languages: ['python'], poolSize: 1, id: 'sessions-fallback' }))
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
  } finally { await runner.close() }
})

test('maxSessions 0 disables sessions', async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1, maxSessions: 0, id: 'sessions-off' }))
  try {
    await runner.start()
    assert.equal(runner.sessions, undefined)
  } finally { await runner.close() }
})
