import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool } from 'undici'
import { NotSentError, requestJson } from '../../src/runners/runner-request.ts'

test("a request aborted while it waits for a connection never left: NotSentError; one aborted after it left: the signal's reason", async () => {
  const held: Array<() => void> = []
  const server = createServer((req, res) => {
    held.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1 })
  try {
    const first = new AbortController()
    const second = new AbortController()
    const sentOne = requestJson(pool, {
      method: 'POST',
      path: '/',
      headers: {},
      body: '{}',
      timeoutMs: 10_000,
      signal: first.signal
    })
    const waiting = requestJson(pool, {
      method: 'POST',
      path: '/',
      headers: {},
      body: '{}',
      timeoutMs: 10_000,
      signal: second.signal
    })
    while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    second.abort(new Error('silent'))
    await assert.rejects(waiting, (err: unknown) => err instanceof NotSentError && err.message === 'silent')
    first.abort(new Error('silent'))
    await assert.rejects(
      sentOne,
      (err: unknown) => !(err instanceof NotSentError) && (err as Error).message === 'silent'
    )
    const answered = requestJson(pool, { method: 'GET', path: '/', headers: {}, timeoutMs: 10_000 })
    while (held.length < 2) await new Promise((resolve) => setTimeout(resolve, 10))
    held[1]?.()
    assert.deepEqual(await answered, { statusCode: 200, body: { ok: true } })
  } finally {
    await pool.destroy()
    server.closeAllConnections()
    server.close()
  }
})

test('a refused connection never left: NotSentError', async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const pool = new Pool(`http://127.0.0.1:${port}`)
  try {
    await assert.rejects(
      requestJson(pool, { method: 'GET', path: '/', headers: {}, timeoutMs: 5000 }),
      (err: unknown) => err instanceof NotSentError
    )
  } finally {
    await pool.destroy()
  }
})
