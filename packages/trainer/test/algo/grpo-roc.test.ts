import { test } from 'node:test'
import assert from 'node:assert/strict'
import { errorPenalty, formatPenalty, grpoRoc, seededRandom, groupAdvantages, hasEqualRewards, overlongPenalty, type RocRollout } from '@sandfleet/trainer'

const r = (reward: number, toolStatuses: RocRollout['toolStatuses'], answers = 1, turns = 2): RocRollout => ({ reward, toolStatuses, answers, turns })

test('penalties follow the formulas: statuses, not text; fleet faults left out', () => {
  assert.equal(errorPenalty(r(1, [])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'error', 'timeout', 'ok'])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'infra_error', 'parse_error'])), 0.5)
  assert.equal(errorPenalty(r(1, ['ok', 'ok'])), 0)
  assert.equal(formatPenalty(r(1, [], 0, 3)), 1)
  assert.equal(formatPenalty(r(1, [], 1, 3)), 0)
  assert.equal(formatPenalty(r(1, [], 3, 4)), 0.5)
  assert.equal(formatPenalty(r(1, [], 9, 2)), 1)
})

test('hand-computed group: the draw follows weights 1/p_total among positives', () => {
  // positives 0,1,2 with p_total 0 (→ floor 0.01, weight 100), 0.5 (weight 2), 1.5 (weight 2/3); negatives 3,4,5
  const group = [r(1, ['ok']), r(1, ['ok', 'error']), r(1, ['error'], 2, 2), r(0, ['ok']), r(0, ['error']), r(0, [])]
  // keep 3 of 6: round(3·3/6)=2 positives, 1 negative. Draws: 0.999 over total 102.667 → x = 102.56 → index 2 (past 100 and 2);
  // then over {0,1} total 102: 0.5 → x = 51 → index 0; negative draw 0.0 → first negative (3).
  const draws = [0.999, 0.5, 0.0]
  const kept = grpoRoc(group, { keep: 3, random: () => draws.shift() as number })
  assert.deepEqual(kept, [0, 2, 3])
  // 0.99 → x = 101.64: past weight 100, inside weight 2 → index 1; then 0.5 over {0, 2} → index 0
  const draws2 = [0.99, 0.5, 0.0]
  assert.deepEqual(grpoRoc(group, { keep: 3, random: () => draws2.shift() as number }), [0, 1, 3])
  assert.deepEqual(grpoRoc(group, { keep: 3, mode: 'deterministic', random: () => 0 }), [0, 1, 3], 'lowest penalties first')
})

test('seeded RoC is reproducible and keeps the positive share', () => {
  const group = Array.from({ length: 16 }, (_, i) => r(i % 4 === 0 ? 0 : 1, i % 3 === 0 ? ['error'] : ['ok']))
  const a = grpoRoc(group, { keep: 8, random: seededRandom(7) })
  assert.deepEqual(a, grpoRoc(group, { keep: 8, random: seededRandom(7) }))
  assert.equal(a.length, 8)
  assert.equal(a.filter((i) => group[i].reward > 0).length, 6)
})

test('GRPO, Dr.GRPO, equal-reward filter and DAPO overlong penalty', () => {
  assert.deepEqual(groupAdvantages([1, 0, 0, 1], 'dr_grpo'), [0.5, -0.5, -0.5, 0.5])
  assert.deepEqual(groupAdvantages([1, 0, 0, 1]).map((x) => Math.round(x * 1e4) / 1e4), [1, -1, -1, 1])
  assert.equal(hasEqualRewards([1, 1, 1]), true)
  assert.equal(hasEqualRewards([1, 0]), false)
  assert.equal(overlongPenalty(100, 200, 50), 0)
  assert.equal(overlongPenalty(175, 200, 50), -0.5)
  assert.equal(overlongPenalty(250, 200, 50), -1)
})
