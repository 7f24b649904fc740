import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RunnerLoad } from '@sandfleet/protocol'
import { RunnerSet } from '../../src/runners/runner-set.ts'

test('runner set: a runner found by DNS is polled as it is found, so it is ready to take calls right after the re-resolve', async () => {
  const load: RunnerLoad = {
    runner: 'r-dns',
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 4,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: 4,
    busy: 0,
    sessions: 0
  }
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(load))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const set = new RunnerSet({ dns: `127.0.0.1:${(server.address() as AddressInfo).port}` })
  try {
    await set.discover()
    assert.equal(set.members.length, 1)
    assert.equal(set.members[0].load?.state, 'ready')
    assert.equal(set.pick()?.id, 'r-dns')
    assert.equal(set.ready(), true)
  } finally {
    await set.close()
    server.closeAllConnections()
    server.close()
  }
})

test('runner set: a load report that comes too late does not take a runner out at once (a slow or starved moment); a refused connection does', async () => {
  const load: RunnerLoad = {
    runner: 'r-slow',
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 4,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: 4,
    busy: 0,
    sessions: 0
  }
  let slow = false
  const server = createServer((req, res) => {
    if (!slow) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(load))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const set = new RunnerSet({ urls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`] })
  try {
    await set.poll()
    slow = true
    await set.poll() // the client gives a load report 2 s
    assert.equal(set.members[0].up, true, 'one late report: still routable')
    assert.equal(set.pick()?.id, 'r-slow')
    server.closeAllConnections()
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve()
      })
    )
    await set.poll()
    assert.equal(set.members[0].up, false, 'connection refused: out')
  } finally {
    await set.close()
  }
})

test('runner set: a runner that answers nothing for silenceMs is marked down and the calls in flight on it are aborted; a load report takes it back', async () => {
  const load: RunnerLoad = {
    runner: 'r-silent',
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 4,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: 4,
    busy: 0,
    sessions: 0
  }
  let frozen = false
  const server = createServer((req, res) => {
    if (!frozen) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(load))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const set = new RunnerSet({
    urls: [`http://127.0.0.1:${(server.address() as AddressInfo).port}`],
    silenceMs: 200,
    loadPollMs: 50
  })
  try {
    await set.poll()
    const member = set.members[0]
    const call = member.silenced
    frozen = true
    set.watch(member.lastAnswerAt + 100)
    assert.equal([member.up, call.aborted].join(), 'true,false', 'silent for less than silenceMs: still up')
    set.watch(member.lastAnswerAt + 250)
    assert.equal(member.up, false, 'silent past silenceMs: down')
    assert.equal(call.aborted, true, 'the calls in flight on it are aborted')
    assert.match(String((call.reason as Error).message), /answered nothing for 250 ms/)
    assert.equal(member.silenced.aborted, false, 'a call made from now on watches a new signal')
    assert.equal(set.pick(), undefined, 'no call is routed to it')
    frozen = false
    await set.poll()
    assert.equal(member.up, true, 'a load report takes it back')
  } finally {
    await set.close()
    server.closeAllConnections()
    server.close()
  }
})
