import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_SIM, simulate, VARIANTS } from '../src/rollout-scheduler-sim.ts'

test('the simulation: max-length KV reservation never preempts; round robin does when engines are overloaded', () => {
  const p = { ...DEFAULT_SIM, engines: 2, capacityTokens: 16_384, trajectories: 64, seed: 5 }
  const kv = simulate(p, VARIANTS[0])
  const rr = simulate(p, { name: 'rr', policy: 'round_robin' })
  assert.equal(kv.evictions, 0)
  assert.ok(rr.evictions > 0, 'overloaded engines preempt under round robin')
  assert.equal(kv.generatedTokens, rr.generatedTokens, 'the same workload generated the same tokens')
  assert.deepEqual(simulate(p, VARIANTS[0]), kv, 'deterministic per seed')
})
