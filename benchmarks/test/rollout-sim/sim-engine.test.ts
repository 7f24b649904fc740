import { test } from 'node:test'
import assert from 'node:assert/strict'
import { H100_QWEN3_14B, SimEngine, type EngineModel, type SimSeq } from '../../src/rollout-sim/sim-engine.ts'

const close = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9
const seq = (context: number, target: number, owner: object = {}): SimSeq => ({
  owner,
  context,
  target,
  generated: 0,
  computed: 0,
  lost: 0
})
const model = (over: Partial<EngineModel> = {}): EngineModel => ({ ...H100_QWEN3_14B, ...over })

/** Runs the engine until nothing is left; returns the sum of step costs and the finish order. */
function drain(e: SimEngine): { ms: number; finished: SimSeq[] } {
  let ms = 0
  const finished: SimSeq[] = []
  for (let step = e.step(); step !== undefined; step = e.step()) {
    ms += step
    finished.push(...e.finishStep().finished)
  }
  return { ms, finished }
}

test('a prefill costs the weights once, its tokens and their attention: superlinear in its length', () => {
  const { baseMs, perTokenMs, attentionMsPerTokenPair } = H100_QWEN3_14B.cost
  const prefill = (n: number): number => {
    const e = new SimEngine(model())
    e.submit(seq(n, 1))
    return e.step() as number
  }
  assert.ok(close(prefill(1000), baseMs + perTokenMs * 1000 + attentionMsPerTokenPair * 1000 * 500))
  assert.ok(
    prefill(8000) - baseMs > 8 * (prefill(1000) - baseMs),
    'eight times the tokens cost more than eight times as much'
  )
})

test("a decode step reads every running sequence's KV; prefill is chunked to the token budget", () => {
  const { baseMs, perTokenMs, kvReadMsPerToken } = H100_QWEN3_14B.cost
  const e = new SimEngine(model({ maxBatchedTokens: 4096 }))
  e.submit(seq(10_000, 3))
  const steps: number[] = []
  for (let s = e.step(); s !== undefined; s = e.step()) {
    steps.push(s)
    e.finishStep()
  }
  assert.equal(
    steps.length,
    3 + 2,
    'three chunks of at most 4,096 (the third samples the first token), then two decode steps'
  )
  // the token fed in attends to the KV of every token before it
  assert.ok(close(steps[3], baseMs + perTokenMs + kvReadMsPerToken * 10_000))
  assert.ok(close(steps[4], baseMs + perTokenMs + kvReadMsPerToken * 10_001))
  assert.equal(e.used, 0, 'a finished sequence gives its KV back')
})

test('an engine out of KV preempts its newest sequence and recomputes it from scratch later', () => {
  // 1,000 tokens of KV, no prefix cache: two sequences of 400 context growing by 300 each cannot both finish at once
  const e = new SimEngine(model({ capacityTokens: 1000, prefixCache: false }))
  const older = seq(400, 300)
  const newer = seq(400, 300)
  e.submit(older)
  e.submit(newer)
  const { finished } = drain(e)
  assert.deepEqual(finished, [older, newer], 'the older one runs on; the newer one waits and finishes after')
  // both grow a token a step until they hold 500 each (1,000): the newer one gives its 500 up, and waits
  // (its 501 tokens fit only when the older one is done), then computes them again
  assert.equal(e.counters.preemptions, 1)
  assert.equal(e.counters.recomputedTokens, 500)
  assert.equal(newer.generated, 300)
  assert.equal(e.used, 0)
})

test('the prefix cache: a later turn of the same trajectory prefills only what the engine does not hold', () => {
  const owner = {}
  const e = new SimEngine(model())
  e.submit(seq(2000, 100, owner))
  drain(e)
  e.submit(seq(2100 + 200, 50, owner))
  const cost = e.step() as number
  const { baseMs, perTokenMs, attentionMsPerTokenPair } = H100_QWEN3_14B.cost
  // the first turn left 2,099 tokens of KV (its last sampled token never went through the model)
  assert.ok(close(cost, baseMs + perTokenMs * 201 + attentionMsPerTokenPair * 201 * (2099 + 201 / 2)))
  assert.equal(e.counters.cachedTokens, 2099)
})
