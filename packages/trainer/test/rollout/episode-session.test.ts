import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { startFakeFleet } from '@sandfleet/client/testing'
import { CompletionsEngine, EpisodeSession, runDataset, runEpisode } from '@sandfleet/trainer'
import { startScriptedEngine, type Script } from '@sandfleet/trainer'

// the fake fleet starts python3 (and replays a session's history) for each call: a loaded machine
// takes seconds, and these tests are about state, not time limits
const SLOW_MACHINE_MS = 60_000
const call = (code: string): string =>
  `<tool_call>${JSON.stringify({ name: 'python', arguments: { code } })}</tool_call>`
const script: Script = (ctx) => {
  if (ctx.turn === 0) return call('x = 41')
  if (ctx.turn === 1) return call('print(x + 1)')
  if (ctx.turn === 2) return call('print(x + 2)')
  return '<answer>\\boxed{42}</answer>'
}

test("a session keeps Python state across an episode's turns; without one each call starts fresh", async () => {
  const server = await startScriptedEngine(script)
  const fleet = await startFakeFleet() // python3 behind the public API, sessions replayed
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  try {
    const session = new EpisodeSession(client)
    const t = await runEpisode({
      engine,
      fleet: session,
      prompt: [{ role: 'user', content: 'q' }],
      timeoutMs: SLOW_MACHINE_MS
    })
    await session.close()
    assert.deepEqual(
      t.toolCalls.map((c) => [c.status, c.result?.stdout]),
      [
        ['ok', ''],
        ['ok', '42\n'],
        ['ok', '43\n']
      ]
    )
    assert.equal(session.opened, 1)
    assert.deepEqual(fleet.sessions(), [], 'closed at the end')
    const plain = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'q' }],
      timeoutMs: SLOW_MACHINE_MS
    })
    assert.deepEqual(
      plain.toolCalls.map((c) => c.status),
      ['ok', 'error', 'error'],
      'x is gone between stateless calls'
    )
    assert.match(plain.toolCalls[1].text, /NameError/)
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test("a lost session answers infra_error (the fleet's fault) and the next call opens a fresh one", async () => {
  const server = await startScriptedEngine(script)
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  const session = new EpisodeSession(client)
  const lossy = {
    execute: async (req: Parameters<EpisodeSession['execute']>[0], o?: { signal?: AbortSignal }) => {
      if (req.code.includes('x + 1')) for (const id of fleet.sessions()) fleet.loseSession(id)
      return await session.execute(req, o)
    }
  }
  try {
    const t = await runEpisode({
      engine,
      fleet: lossy,
      prompt: [{ role: 'user', content: 'q' }],
      timeoutMs: SLOW_MACHINE_MS
    })
    assert.deepEqual(
      t.toolCalls.map((c) => c.status),
      ['ok', 'infra_error', 'error']
    )
    assert.match(t.toolCalls[1].text, /The tool is unavailable \(infra_error\)/)
    assert.match(t.toolCalls[2].text, /NameError/, 'the fresh session has no x')
    assert.equal(session.opened, 2)
  } finally {
    await session.close()
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test('runDataset with sessions: one session per episode, all closed', async () => {
  const server = await startScriptedEngine(script)
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  try {
    const summary = await runDataset({
      items: [{ messages: [{ role: 'user', content: 'q' }], reference: '42' }],
      n: 3,
      keep: 3,
      episode: { engine, fleet: client, timeoutMs: SLOW_MACHINE_MS },
      sessions: { client },
      onRecord: () => {}
    })
    assert.deepEqual([summary.rollouts, summary.accuracy, summary.tool_error_ratio], [3, 1, 0])
    assert.equal(fleet.log.filter((e) => e.path === '/v1/sessions').length, 3)
    assert.deepEqual(fleet.sessions(), [])
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})
