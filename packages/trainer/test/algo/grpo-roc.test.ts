import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ADVANTAGE_STDS,
  grpoRoc,
  releasedRocQuota,
  rocQuota,
  roundHalfEven,
  seededRandom,
  groupAdvantages,
  hasEqualRewards,
  overlongPenalty,
  TRAINER_ERROR_CODES,
  type RocRollout
} from '@sandfleet/trainer'
import { CALL, chatmlRollout } from '../helpers/roc-rollouts.ts'

const r = (reward: number, toolStatuses: RocRollout['toolStatuses'], answers = 1, turns = 2): RocRollout => ({
  reward,
  toolStatuses,
  answers,
  turns
})

test('hand-computed group: the draw follows weights 1/p_total among positives', () => {
  // positives 0,1,2 with p_total 0 (→ floor 0.01, weight 100), 0.5 (weight 2), 1.5 (weight 2/3); negatives 3,4,5
  const group = [r(1, ['ok']), r(1, ['ok', 'error']), r(1, ['error'], 2, 2), r(0, ['ok']), r(0, ['error']), r(0, [])]
  // keep 3 of 6: round(3·3/6)=2 positives, 1 negative. Draws: 0.999 over total 102.667 → x = 102.56 → index 2 (past 100
  // and 2); then over {0,1} total 102: 0.5 → x = 51 → index 0; negative draw 0.0 → first negative (3).
  const draws = [0.999, 0.5, 0.0]
  const kept = grpoRoc(group, { keep: 3, random: () => draws.shift() as number })
  assert.deepEqual(kept, [0, 2, 3])
  // 0.99 → x = 101.64: past weight 100, inside weight 2 → index 1; then 0.5 over {0, 2} → index 0
  const draws2 = [0.99, 0.5, 0.0]
  assert.deepEqual(grpoRoc(group, { keep: 3, random: () => draws2.shift() as number }), [0, 1, 3])
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
  assert.deepEqual(
    groupAdvantages([1, 0, 0, 1]).map((x) => Math.round(x * 1e4) / 1e4),
    [1, -1, -1, 1]
  )
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
  assert.ok(
    adv.some((a) => a !== 0),
    'the group has a learning signal'
  )
  // two negatives of 32: round(2·16/32) = 1 < 2, so both stay; with minNegatives 0 only one would
  const two = Array.from({ length: 32 }, (_, i) => r(i < 2 ? 0 : 1, ['ok']))
  assert.equal(grpoRoc(two, { keep: 16, random: seededRandom(1) }).filter((i) => i < 2).length, 2)
  assert.equal(grpoRoc(two, { keep: 16, random: seededRandom(1), minNegatives: 0 }).filter((i) => i < 2).length, 1)
  // and the same guard for positives: one correct rollout of 32 stays
  const one = Array.from({ length: 32 }, (_, i) => r(i === 9 ? 1 : 0, ['ok']))
  assert.ok(grpoRoc(one, { keep: 16, random: seededRandom(1) }).includes(9))
})

test('without a random source the draws are still seeded: two calls agree', () => {
  const group = Array.from({ length: 32 }, (_, i) => r(i % 3 === 0 ? 0 : 1, i % 5 === 0 ? ['error'] : ['ok']))
  assert.deepEqual(grpoRoc(group, { keep: 16 }), grpoRoc(group, { keep: 16 }))
})

test("GRPO advantages with verl's unbiased std (n − 1) beside the population std", () => {
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

test('Python rounding: halves go to the even integer', () => {
  assert.deepEqual(
    [0.5, 1.5, 2.5, 3.5, 4.5, 13.5, -0.5, 2.4999, 2.5001].map(roundHalfEven),
    [0, 2, 2, 4, 4, 14, 0, 2, 3]
  )
})

test('released quota: each side rounded half to even, then the guards; ours rounds half up', () => {
  // 32 → 16 with 5 positives: positives 2.5 → 2, negatives 13.5 → 14; the positive guard (≤ min(2, 5)) keeps 2,
  // negatives 14
  assert.deepEqual(releasedRocQuota(5, 27, 16), { positives: 2, negatives: 14 })
  assert.deepEqual(rocQuota(5, 27, 16), { positives: 3, negatives: 13 }, 'ours keeps one more positive')
  // 9 positives: 4.5 → 4 and 11.5 → 12, no guard fires
  assert.deepEqual(releasedRocQuota(9, 23, 16), { positives: 4, negatives: 12 })
  assert.deepEqual(rocQuota(9, 23, 16), { positives: 5, negatives: 11 })
  // 13 positives: 6.5 → 6, 9.5 → 10
  assert.deepEqual(releasedRocQuota(13, 19, 16), { positives: 6, negatives: 10 })
  assert.deepEqual(rocQuota(13, 19, 16), { positives: 7, negatives: 9 })
  // 7 positives: 3.5 → 4 either way
  assert.deepEqual(releasedRocQuota(7, 25, 16), rocQuota(7, 25, 16))
  // the guards: one negative of 32 (0.5 → 0 ≤ min(2, 1)): it stays; one positive likewise
  assert.deepEqual(releasedRocQuota(31, 1, 16), { positives: 15, negatives: 1 })
  assert.deepEqual(releasedRocQuota(1, 31, 16), { positives: 1, negatives: 15 })
  // two positives: share 1 ≤ min(2, 2), so both; 16 and 16: the guards leave 8 and 8
  assert.deepEqual(releasedRocQuota(2, 30, 16), { positives: 2, negatives: 14 })
  assert.deepEqual(releasedRocQuota(16, 16, 16), { positives: 8, negatives: 8 })
  // odd keep, both shares half-way: 3.5 → 4 and 3.5 → 4 make 8 of 7, where the released code stops on its assertion;
  // the positives' share stands, negatives get the rest
  assert.deepEqual(releasedRocQuota(7, 7, 7), { positives: 4, negatives: 3 })
  // 5 and 9 of 14 → 7: 2.5 → 2 and 4.5 → 4 make 6, but the positive guard (2 ≤ 2) gives negatives 7 − 2
  assert.deepEqual(releasedRocQuota(5, 9, 7), { positives: 2, negatives: 5 })
})

test('deterministic keeps the first negatives in batch order, not the tidiest ones', () => {
  // negatives 0, 1 untidy (no tool: p_err 0.5; no answer: p_format 1), 2, 3 tidy; positives 4..7 alike
  const untidy = chatmlRollout(0, ['I give up.'])
  const tidy = chatmlRollout(0, [CALL, '<answer>\\boxed{41}</answer>'], [['ok', '41']])
  const right = chatmlRollout(1, [CALL, '<answer>\\boxed{42}</answer>'], [['ok', '42']])
  const group = [untidy, untidy, tidy, tidy, right, right, right, right]
  // 4 and 4 of 8 → 4: shares 2 and 2; positives all at penalty 0, so batch order: 4, 5; negatives the first two: 0, 1
  assert.deepEqual(grpoRoc(group, { keep: 4, mode: 'deterministic' }), [0, 1, 4, 5])
})

test('deterministic drops a group smaller than keep (the released code skips it) and keeps one of exactly keep whole', () => {
  const x = chatmlRollout(1, [CALL, '<answer>\\boxed{42}</answer>'], [['ok', '42']])
  const y = chatmlRollout(0, ['no'])
  assert.deepEqual(grpoRoc([x, y, x], { keep: 4, mode: 'deterministic' }), [])
  assert.deepEqual(grpoRoc([x, y, x], { keep: 4 }), [0, 1, 2], 'sample mode keeps it whole')
  assert.deepEqual(grpoRoc([x, y, x, y], { keep: 4, mode: 'deterministic' }), [0, 1, 2, 3])
})

test('deterministic: a group of 8 → 4 picked as the released code picks it, and as ours picks it by status', () => {
  const answer = (v: number): string => `<answer>\\boxed{${v}}</answer>`
  const group = [
    chatmlRollout(0, ['I give up.']), // 0: −
    chatmlRollout(0, [CALL, answer(41)], [['ok', '41']]), // 1: −
    chatmlRollout(0, [CALL, answer(40)], [['error', 'NameError: x']]), // 2: −
    chatmlRollout(0, [CALL, answer(39)], [['ok', '39']]), // 3: −
    chatmlRollout(1, [answer(42)]), // 4: +, one turn, no tool
    chatmlRollout(1, [CALL, answer(42)], [['ok', 'no error: 42']]), // 5: +, a clean run that prints "error"
    chatmlRollout(1, [CALL, answer(42)], [['killed', 'Killed: the code was killed']]), // 6: +, killed
    chatmlRollout(
      1,
      [CALL, answer(41) + CALL, answer(42)],
      [
        ['ok', '41'],
        ['ok', '42']
      ]
    ) // 7: +, two answers over three turns
  ]
  // 4 positives and 4 negatives → 4: shares 2 and 2 (the guards change nothing); negatives 0 and 1, the first two.
  // Positives by the released penalty, substring p_err + released p_format:
  //   4: 0.5 (no block) + 1 (no span) = 1.5; 5: 1 + 0 (one span, one answer) = 1; 6: 0 + 0 = 0;
  //   7: 0 + (2 − 1)/2 = 0.5 → 6, 7
  assert.deepEqual(grpoRoc(group, { keep: 4, mode: 'deterministic', errorCount: 'substring' }), [0, 1, 6, 7])
  // by status: 4: 0.5 + 1 = 1.5; 5: 0 + 0 = 0; 6: 1 + 0 = 1; 7: 0 + 0.5 = 0.5 → 5, 7
  assert.deepEqual(grpoRoc(group, { keep: 4, mode: 'deterministic' }), [0, 1, 5, 7])
  // the draws never run in deterministic mode
  let draws = 0
  assert.deepEqual(
    grpoRoc(group, {
      keep: 4,
      mode: 'deterministic',
      random: () => {
        draws++
        return 0.5
      }
    }),
    [0, 1, 5, 7]
  )
  assert.equal(draws, 0)
})

test('deterministic needs the response text and guards that fit in keep, as the released code asserts', () => {
  const bare = Array.from({ length: 8 }, (_, i) => ({
    reward: i % 2,
    toolStatuses: ['ok' as const],
    answers: 1,
    turns: 2
  }))
  assert.throws(
    () => grpoRoc(bare, { keep: 4, mode: 'deterministic' }),
    (e: { code?: string; message: string }) =>
      e.code === TRAINER_ERROR_CODES.BAD_INPUT && /responseText/.test(e.message)
  )
  assert.throws(() => grpoRoc(bare, { keep: 3, mode: 'deterministic' }), /at least 4 .* more than keep 3/)
  assert.equal(grpoRoc(bare, { keep: 3 }).length, 3, 'sample mode shares a small keep between the guards')
})
