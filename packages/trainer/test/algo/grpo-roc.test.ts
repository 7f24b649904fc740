import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADVANTAGE_STDS, answerTagsBalanced, countAnswers, errorPenalty, formatPenalty, grpoRoc, rocQuota, seededRandom, groupAdvantages, hasEqualRewards, overlongPenalty, type RocRollout } from '@sandfleet/trainer'

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

test('a 31-of-32 group keeps a negative (the released code guards 2), so its advantage is not 0', () => {
  const group = Array.from({ length: 32 }, (_, i) => r(i === 5 ? 0 : 1, ['ok']))
  const kept = grpoRoc(group, { keep: 16, random: seededRandom(1) })
  assert.equal(kept.length, 16)
  assert.ok(kept.includes(5), 'the only negative is kept')
  const adv = groupAdvantages(kept.map((i) => group[i].reward))
  assert.ok(adv.some((a) => a !== 0), 'the group has a learning signal')
  // two negatives of 32: round(2·16/32) = 1 < 2, so both stay; with minNegatives 0 only one would
  const two = Array.from({ length: 32 }, (_, i) => r(i < 2 ? 0 : 1, ['ok']))
  assert.equal(grpoRoc(two, { keep: 16, random: seededRandom(1) }).filter((i) => i < 2).length, 2)
  assert.equal(grpoRoc(two, { keep: 16, random: seededRandom(1), minNegatives: 0 }).filter((i) => i < 2).length, 1)
  // and the same guard for positives: one correct rollout of 32 stays
  const one = Array.from({ length: 32 }, (_, i) => r(i === 9 ? 1 : 0, ['ok']))
  assert.ok(grpoRoc(one, { keep: 16, random: seededRandom(1) }).includes(9))
})

test('p_format is 1 when the response has no <answer> block, whatever its boxed answers (the paper, the released code)', () => {
  assert.equal(countAnswers(['I compute.', 'So \\boxed{3}.']), 0, 'a boxed answer without the tag is not an answer block')
  assert.equal(formatPenalty(r(1, [], countAnswers(['So \\boxed{3}.']), 2)), 1)
  assert.equal(countAnswers(['<answer>\\boxed{3}</answer>']), 1)
  assert.equal(formatPenalty(r(1, [], 1, 2)), 0)
  assert.equal(formatPenalty({ ...r(1, [], 1, 2), unbalancedAnswerTags: true }), 1, 'an <answer> left open, as the released code counts it')
  assert.equal(answerTagsBalanced(['<answer>3</answer> <answer>4']), false)
  assert.equal(answerTagsBalanced(['<answer>3</answer>', 'x']), true)
})

test('without a random source the draws are still seeded: two calls agree', () => {
  const group = Array.from({ length: 32 }, (_, i) => r(i % 3 === 0 ? 0 : 1, i % 5 === 0 ? ['error'] : ['ok']))
  assert.deepEqual(grpoRoc(group, { keep: 16 }), grpoRoc(group, { keep: 16 }))
})

test('deterministic mode is the released code: positives and negatives by lowest penalty, no draw', () => {
  // negatives 0..3 with penalties: 0 → 0.5+1 (no tools, no answer), 1 → 0+0, 2 → 1+0, 3 → 0.5+0
  const group = [r(0, [], 0), r(0, ['ok']), r(0, ['error']), r(0, []), r(1, ['ok']), r(1, ['error']), r(1, []), r(1, ['ok'], 3, 2)]
  let draws = 0
  const kept = grpoRoc(group, { keep: 4, mode: 'deterministic', random: () => { draws++; return 0.999 } })
  assert.deepEqual(kept, [1, 3, 4, 6])
  assert.equal(draws, 0)
})

test('GRPO advantages with verl\'s unbiased std (n − 1) beside the population std', () => {
  const round = (xs: number[]): number[] => xs.map((x) => Math.round(x * 1e4) / 1e4)
  // rewards 1,0,0,1: mean 0.5; population std 0.5, unbiased std sqrt(1/3) = 0.57735
  assert.deepEqual(round(groupAdvantages([1, 0, 0, 1], 'grpo', { std: 'population' })), [1, -1, -1, 1])
  assert.deepEqual(round(groupAdvantages([1, 0, 0, 1], 'grpo', { std: 'unbiased' })), [0.866, -0.866, -0.866, 0.866])
  assert.deepEqual(groupAdvantages([1, 1, 1], 'grpo', { std: 'unbiased' }), [0, 0, 0])
  // verl: a group of one has mean 0 and std 1
  assert.deepEqual(round(groupAdvantages([1], 'grpo', { std: 'unbiased' })), [1])
  assert.deepEqual(ADVANTAGE_STDS, ['population', 'unbiased'])
})

test('RoC quota: shares, then the guards; guards larger than keep share it', () => {
  assert.deepEqual(rocQuota(31, 1, 16), { positives: 15, negatives: 1 })
  assert.deepEqual(rocQuota(16, 16, 16), { positives: 8, negatives: 8 })
  assert.deepEqual(rocQuota(30, 2, 16), { positives: 14, negatives: 2 })
  assert.deepEqual(rocQuota(2, 2, 2), { positives: 1, negatives: 1 })
  assert.deepEqual(rocQuota(4, 0, 2), { positives: 2, negatives: 0 })
})
