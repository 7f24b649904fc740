import { test } from 'node:test'
import assert from 'node:assert/strict'
import { agreement, judge } from '../src/answer-agreement.ts'
import { HELD_OUT_PAIRS, HELD_OUT_PAIRS_B } from '../src/workloads/answer-pairs.ts'

test('agreement counts the pairs judged as labelled and lists the others; a response pair is judged by its extracted answer', () => {
  const pairs = [
    { kind: 'number' as const, candidate: '0.5', reference: '\\frac12', equal: true, why: 'equal' },
    { kind: 'number' as const, candidate: '2', reference: '3', equal: true, why: 'mislabelled on purpose' },
    {
      kind: 'boxes' as const,
      candidate: 'first \\boxed{1}, last \\boxed{2}',
      reference: '2',
      equal: true,
      why: 'the last box',
      response: true
    }
  ]
  const r = agreement(pairs)
  assert.equal(r.agreed, 2)
  assert.equal(r.total, 3)
  assert.deepEqual(
    r.misses.map((m) => m.pair.candidate),
    ['2']
  )
  assert.equal(judge({ ...pairs[2], reference: '1' }).equal, false, 'an earlier box is not the answer')
})

test('the held-out pairs: both labels present, each with its reason, no pair twice', () => {
  const all = [...HELD_OUT_PAIRS, ...HELD_OUT_PAIRS_B]
  assert.ok(all.filter((x) => x.equal).length > 0 && all.filter((x) => !x.equal).length > 0)
  assert.ok(all.every((x) => x.why.length > 0))
  assert.equal(new Set(all.map((x) => `${x.candidate}\u0000${x.reference}`)).size, all.length)
})
