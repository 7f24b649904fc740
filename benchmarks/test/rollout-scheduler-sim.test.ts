import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_SCHEDULE_POLICY } from '@sandfleet/trainer'
import { DEFAULT_SIM, DEFAULT_VARIANT, simulate, VARIANTS } from '../src/rollout-scheduler-sim.ts'

test('the simulation: max-length KV reservation never preempts; least requests does when the KV is overcommitted', () => {
  const p = {
    ...DEFAULT_SIM,
    engines: 2,
    engine: { ...DEFAULT_SIM.engine, capacityTokens: 32_768 },
    workload: { ...DEFAULT_SIM.workload, trajectories: 96, seed: 5 }
  }
  const kv = simulate(p, VARIANTS[0])
  const lr = simulate(p, DEFAULT_VARIANT)
  assert.equal(kv.preemptions, 0)
  assert.ok(lr.preemptions > 0, 'overcommitted engines preempt')
  assert.ok(lr.recomputedTokens > 0, 'and recompute what they preempted')
  assert.equal(kv.generatedTokens, lr.generatedTokens, 'the same workload generated the same tokens')
  assert.deepEqual(simulate(p, VARIANTS[0]), kv, 'deterministic per seed')
})

test("the simulation's default variant is the trainer's default policy", () => {
  assert.equal(DEFAULT_VARIANT.policy, DEFAULT_SCHEDULE_POLICY)
  assert.equal(DEFAULT_VARIANT.reserveNewTokens, undefined)
})
