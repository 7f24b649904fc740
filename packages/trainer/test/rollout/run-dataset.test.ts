import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { startFakeFleet } from '@sandfleet/client/testing'
import { CompletionsEngine, runDataset, type TrajectoryRecord } from '@sandfleet/trainer'
import { startScriptedEngine } from '../helpers/scripted-engine-server.ts'

test('runDataset: DAPO overlong penalty on the reward, equal-reward groups dropped, RoC draws reproducible per seed', async () => {
  let a = 0
  const server = await startScriptedEngine((ctx) => ctx.prompt.includes('item A')
    ? (a++ % 2 === 0 ? '\\boxed{1}' : '\\boxed{9}')
    : `${'padding '.repeat(4)}\\boxed{2}`)
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  const items = [{ messages: [{ role: 'user' as const, content: 'item A' }], reference: '1' }, { messages: [{ role: 'user' as const, content: 'item B' }], reference: '2' }]
  try {
    const records: TrajectoryRecord[] = []
    const summary = await runDataset({ items, n: 4, keep: 4, concurrency: 1, episode: { engine, fleet: client }, overlong: { maxLength: 60, cacheLength: 20 }, dropEqualRewardGroups: true, onRecord: (r) => { records.push(r) } })
    assert.equal(summary.accuracy, 0.75, 'correctness before the penalty: 2 of 4, then 4 of 4')
    assert.equal(summary.groups_dropped, 1, 'item B: four equal rewards')
    assert.equal(summary.kept, 4)
    assert.deepEqual(records.map((r) => r.group), [0, 0, 0, 0])
    assert.deepEqual(records.map((r) => r.reward).sort(), [0, 0, 1, 1])
    assert.deepEqual(records.map((r) => Math.round((r.advantage ?? NaN) * 1e4) / 1e4).sort(), [-1, -1, 1, 1])
    const all: TrajectoryRecord[] = []
    await runDataset({ items: [items[1]], n: 2, keep: 2, episode: { engine, fleet: client }, overlong: { maxLength: 60, cacheLength: 20 }, writeAll: true, onRecord: (r) => { all.push(r) } })
    for (const r of all) assert.equal(r.reward, 1 + (40 - r.response_length) / 20, `penalised for ${r.response_length} tokens past 40`)

    const kept = async (): Promise<number[]> => {
      const out: number[] = []
      await runDataset({ items, n: 4, keep: 2, seed: 7, concurrency: 8, episode: { engine, fleet: client }, onRecord: (r) => { out.push(r.group * 10 + r.sample) } })
      return out.sort((x, y) => x - y)
    }
    assert.deepEqual(await kept(), await kept())
  } finally { await client.close(); await engine.close(); await fleet.close(); await server.close() }
})
