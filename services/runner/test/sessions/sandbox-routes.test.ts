/**
 * A streamed call refused after its first event ends with a line that blames the party its refusal would have blamed
 * before the stream began: its ErrorBody (`status`) and that answer's HTTP status (`http_status`).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import type { ReadableStream } from 'node:stream/web'
import { RUNNER_HEADERS, RUNNER_SANDBOX_PATHS, SESSION_LOST, type SandboxInfo } from '@sandfleet/protocol'
import { readNdjson } from '@sandfleet/protocol/http'
import { runnerConfig } from '../../src/config.ts'
import { SandboxError, SessionError } from '../../src/errors.ts'
import { silentLogger } from '../../src/logger.ts'
import { listenRunner } from '../../src/main.ts'
import { streamRefusal } from '../../src/sessions/sandbox-routes.ts'

test("a refusal line carries its refusal's status and HTTP status: the fleet's lost session, the caller's argument", () => {
  assert.deepEqual(streamRefusal(new SessionError(SESSION_LOST, 'session s lost: its processes died')), {
    http_status: 410,
    status: 'infra_error',
    error: { code: 'SF_ERR_SESSION_LOST', message: 'session s lost: its processes died' }
  })
  assert.deepEqual(streamRefusal(new SandboxError('SF_ERR_SANDBOX_BAD_ARGUMENT', 'signal 3')), {
    http_status: 400,
    status: 'invalid_request',
    error: { code: 'SF_ERR_SANDBOX_BAD_ARGUMENT', message: 'signal 3' }
  })
  assert.deepEqual(streamRefusal(new Error('a bug')), {
    http_status: 500,
    status: 'infra_error',
    error: { code: 'SF_ERR_RUNNER_INTERNAL', message: 'internal error' }
  })
})

test("a sandbox lost while its process streams ends the stream with 410 infra_error, the fleet's fault", async () => {
  const server = await listenRunner(
    runnerConfig({ backend: 'process', poolSize: 1, host: '127.0.0.1', port: 0, id: 'stream-lost' }),
    { logger: silentLogger }
  )
  try {
    const key = { [RUNNER_HEADERS.sessionKey]: 'k-lost' }
    const made = await fetch(server.url + RUNNER_SANDBOX_PATHS.all, {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ template: 'base', timeout_s: 60 })
    })
    assert.equal(made.status, 201)
    const id = ((await made.json()) as SandboxInfo).sandbox_id
    const res = await fetch(server.url + RUNNER_SANDBOX_PATHS.stream.replace(':id', encodeURIComponent(id)), {
      method: 'POST',
      headers: { ...key, 'content-type': 'application/json' },
      body: JSON.stringify({ op: 'start', cmd: '/bin/bash', args: ['-c', 'sleep 60'] })
    })
    assert.equal(res.status, 200, 'the stream began')
    assert.ok(res.body !== null)
    const lines: unknown[] = []
    await readNdjson(Readable.fromWeb(res.body as ReadableStream), (line) => {
      lines.push(line)
      // its session's process killed, as a crash would, once the process runs
      if (lines.length === 1) void server.runner.sessions?.crash(id)
    })
    assert.equal((lines[0] as { event?: string }).event, 'start')
    const last = lines.at(-1) as { http_status?: number; status?: string; error?: { code?: string } }
    assert.deepEqual(
      [last.http_status, last.status, last.error?.code],
      [410, 'infra_error', 'SF_ERR_SESSION_LOST'],
      JSON.stringify(lines)
    )
  } finally {
    await server.close()
  }
})
