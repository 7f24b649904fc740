/**
 * A lost session is the fleet's fault on every API that has sessions: the native API's 410 says
 * `infra_error`, SandboxFusion's `/run_jupyter` answers `SandboxError` (its retriable answer),
 * MCP's session tools a tool error whose status is `infra_error`. Never `invalid_request`: the
 * caller did nothing wrong, and a fresh session retries what the lost one held.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildGatewayApp, loadGatewayConfig, RunnerRefusal, type RunnerClient } from '@sandfleet/gateway'
import { encodeSessionId } from '@sandfleet/protocol'
import { RunnerSet } from '../../src/runners/runner-set.ts'
import { FleetSandboxes } from '../../src/sessions/fleet-sandboxes.ts'
import { echoRunner } from '../helpers/fake-runner.ts'

/** A runner whose sessions die before their first cell, as a crashed session host's do (the runner's 410). */
function losingRunner(): RunnerClient {
  const runner = echoRunner('losing')
  const sessions = runner.sessions
  if (sessions === undefined) throw new Error('the echo runner holds sessions')
  return {
    ...runner,
    sessions: {
      ...sessions,
      execute: async (id: string) => {
        throw new RunnerRefusal(410, {
          status: 'infra_error',
          error: { code: 'SF_ERR_SESSION_LOST', message: `session ${id} lost: its process died` }
        })
      }
    }
  }
}

test("a lost session is the fleet's fault (infra_error) on the native API, /run_jupyter and MCP", async () => {
  const config = loadGatewayConfig({ env: {}, values: {} })
  const { app } = await buildGatewayApp({ config, clients: [losingRunner()], logger: false })
  try {
    await app.ready()
    // a session whose runner left the fleet: the gateway's own answer
    const gone = encodeSessionId('runner-that-left', '0123456789abcdef')
    const native = await app.inject({ method: 'POST', url: `/v1/sessions/${gone}/execute`, payload: { code: '1' } })
    assert.deepEqual(
      [native.statusCode, native.json().status, native.json().error.code],
      [410, 'infra_error', 'SF_ERR_SESSION_LOST']
    )
    // a session whose process died: the runner's answer, passed on
    const sid = (await app.inject({ method: 'POST', url: '/v1/sessions', payload: {} })).json().session_id as string
    const died = await app.inject({ method: 'POST', url: `/v1/sessions/${sid}/execute`, payload: { code: '1' } })
    assert.deepEqual([died.statusCode, died.json().status], [410, 'infra_error'])

    const notebook = (await app.inject({ method: 'POST', url: '/run_jupyter', payload: { cells: ['1'] } })).json()
    assert.equal(notebook.status, 'SandboxError')
    assert.match(notebook.message, /^infra_error: .*lost/)

    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'run_in_session', arguments: { session_id: gone, code: '1' } }
      }
    })
    const result = mcp.json().result
    assert.equal(result.isError, true)
    assert.equal(result.structuredContent.status, 'infra_error')
    assert.match(result.content[0].text, /SF_ERR_SESSION_LOST.*not your code's fault/s)
  } finally {
    await app.close()
  }
})

test("a sandbox whose runner left the fleet is lost as a session is: 410, the fleet's fault", async () => {
  const runners = new RunnerSet({ clients: [echoRunner('here')] })
  const sandboxes = new FleetSandboxes(runners)
  const gone = encodeSessionId('gone', 'n0nce')
  await assert.rejects(
    sandboxes.call(gone, { key: 'k' }, { op: 'info' }),
    (err: unknown) =>
      err instanceof RunnerRefusal &&
      err.statusCode === 410 &&
      err.body.status === 'infra_error' &&
      err.code === 'SF_ERR_SESSION_LOST' &&
      /sandbox .* lost: runner gone/.test(err.message)
  )
  await assert.rejects(
    sandboxes.call('not-ours', { key: 'k' }, { op: 'info' }),
    (err: unknown) => err instanceof RunnerRefusal && err.statusCode === 404 && err.code === 'SF_ERR_SESSION_NOT_FOUND'
  )
})
