import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BudgetExceededError, StepBudget } from '../../../src/reward/expression/budget.ts'
import { evaluate } from '../../../src/reward/expression/evaluate.ts'
import { parseMath } from '../../../src/reward/expression/parse.ts'

const stopsFor =
  (reason: 'steps' | 'time') =>
  (err: unknown): boolean =>
    err instanceof BudgetExceededError && err.message.includes(reason === 'steps' ? 'steps' : 'time limit')

test('the step count stops a comparison however fast the machine is', () => {
  const budget = new StepBudget(10, 60_000)
  for (let k = 0; k < 10; k++) budget.step()
  assert.throws(() => budget.step(), stopsFor('steps'))
  assert.throws(
    () => new StepBudget(100, 60_000).reserve(101),
    stopsFor('steps'),
    'a loop known to be too long stops before it starts'
  )
  assert.throws(
    () => evaluate(parseMath('\\sum_{n=1}^{10^{7}} \\frac{1}{n^2}')!, new Map(), new StepBudget(1_000_000, 60_000)),
    stopsFor('steps')
  )
  assert.throws(
    () => evaluate(parseMath('\\sum_{n=1}^{\\infty} n')!, new Map(), new StepBudget(1_000_000, 60_000)),
    stopsFor('steps')
  )
})

test('the deadline stops a comparison at the next look at the clock', () => {
  const budget = new StepBudget(1_000_000, -1) // a deadline already past
  assert.throws(() => {
    for (let k = 0; k < 2048; k++) budget.step()
  }, stopsFor('time'))
})
