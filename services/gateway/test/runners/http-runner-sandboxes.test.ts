/**
 * A runner's refusal that arrives after a stream's first event blames the party its line names: a lost session is
 * the fleet's (410 `infra_error`, retriable), a bad argument the caller's (400 `invalid_request`). Over real HTTP, from
 * a server that writes the runner's lines.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  isRetriable,
  NDJSON,
  RUNNER_SANDBOX_PATHS,
  type ErrorBody,
  type SandboxEvent,
  type SandboxStreamRefusal
} from '@sandfleet/protocol'
import { RunnerRefusal } from '../../src/errors.ts'
import { HttpRunnerClient } from '../../src/runners/http-runner-client.ts'

/** The last line each sandbox's stream ends with, after its process started. */
const LAST: Readonly<Record<string, SandboxStreamRefusal | { error: ErrorBody['error'] }>> = {
  lost: {
    http_status: 410,
    status: 'infra_error',
    error: { code: 'SF_ERR_SESSION_LOST', message: "the session's agent is gone: its processes died" }
  },
  bad: {
    http_status: 400,
    status: 'invalid_request',
    error: { code: 'SF_ERR_SANDBOX_BAD_ARGUMENT', message: 'a bad argument' }
  },
  // a runner from before the line carried its status and HTTP status
  old: { error: { code: 'SF_ERR_SESSION_LOST', message: "the session's agent is gone: its processes died" } }
}

let server: Server
let client: HttpRunnerClient
before(async () => {
  const prefix = RUNNER_SANDBOX_PATHS.stream.split(':id')[0]
  server = createServer((req, res) => {
    const id = decodeURIComponent((req.url ?? '').slice(prefix.length).split('/')[0])
    req.resume()
    res.writeHead(200, { 'content-type': NDJSON })
    res.write(JSON.stringify({ event: 'start', pid: 7 }) + '\n')
    res.end(JSON.stringify(LAST[id]) + '\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  client = new HttpRunnerClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
})
after(async () => {
  await client.close()
  server.closeAllConnections()
  server.close()
})

/** The refusal sandbox `id`'s stream ends with, and the events seen before it. */
async function refused(id: string): Promise<{ refusal: RunnerRefusal; events: SandboxEvent[] }> {
  const events: SandboxEvent[] = []
  try {
    await client.sandboxes.stream(id, { token: 't' }, { op: 'start', cmd: '/bin/true', args: [] }, (e) =>
      events.push(e)
    )
  } catch (err) {
    assert.ok(err instanceof RunnerRefusal, String(err))
    return { refusal: err, events }
  }
  assert.fail(`the stream of ${id} was not refused`)
}

test("a session lost mid-stream is the fleet's fault: 410 infra_error, retriable", async () => {
  const { refusal, events } = await refused('lost')
  assert.deepEqual(events, [{ event: 'start', pid: 7 }])
  assert.deepEqual([refusal.statusCode, refusal.body.status, refusal.code], [410, 'infra_error', 'SF_ERR_SESSION_LOST'])
  assert.equal(isRetriable(refusal.body.status), true)
})

test("a caller's error mid-stream stays the caller's: its HTTP status, invalid_request", async () => {
  const { refusal } = await refused('bad')
  assert.deepEqual(
    [refusal.statusCode, refusal.body.status, refusal.code],
    [400, 'invalid_request', 'SF_ERR_SANDBOX_BAD_ARGUMENT']
  )
  assert.equal(isRetriable(refusal.body.status), false)
})

test('a line from an older runner, without its status and HTTP status, is answered as before: 410 invalid_request', async () => {
  const { refusal } = await refused('old')
  assert.deepEqual(
    [refusal.statusCode, refusal.body.status, refusal.code],
    [410, 'invalid_request', 'SF_ERR_SESSION_LOST']
  )
})
