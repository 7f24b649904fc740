import { test } from 'node:test'
import assert from 'node:assert/strict'
import { answersMatch } from '@sandfleet/trainer'
import { BudgetExceededError } from '../../src/reward/expression/budget.ts'
import { equationsMatch, symbolicMatch } from '../../src/reward/symbolic-match.ts'

const options = { timeLimitMs: 60_000, tolerance: 1e-6, points: 5 }

test('constants compare by value to 1e-9: a rounded decimal is not its constant', () => {
  assert.deepEqual(symbolicMatch('\\sqrt{2}', '1.41421356237', options), { equal: true, method: 'symbolic' })
  assert.deepEqual(symbolicMatch('3.14159', '\\pi', options), { equal: false, method: 'symbolic' })
  assert.deepEqual(symbolicMatch('e^{i\\pi}', '-1', options), { equal: true, method: 'symbolic' })
  assert.deepEqual(
    symbolicMatch('\\frac{1}{0}', '\\frac{1}{0}', options),
    { equal: false, method: 'symbolic' },
    'an undefined value equals nothing'
  )
  assert.deepEqual(symbolicMatch('(-\\infty, \\infty)', '\\mathbb{R}', options), { equal: true, method: 'symbolic' })
})

test('structures: brackets and items count, lists sets and unions in any order, matrices by shape', () => {
  assert.equal(symbolicMatch('(1, \\sqrt{4}]', '(1, 2]', options).equal, true)
  assert.equal(symbolicMatch('(1, 2]', '[1, 2]', options).equal, false)
  assert.equal(symbolicMatch('(1, 2)', '(2, 1)', options).equal, false)
  assert.equal(symbolicMatch('(0, 1) \\cup (2, 3)', '(2, 3) \\cup (0, 1)', options).equal, true)
  assert.equal(
    symbolicMatch('\\begin{bmatrix} 1 & 0 \\end{bmatrix}', '\\begin{pmatrix} 1 \\\\ 0 \\end{pmatrix}', options).equal,
    false
  )
  assert.equal(symbolicMatch('5', '2, 5', options).equal, false)
})

test('free variables: random points, where points undefined on both sides say nothing', () => {
  assert.deepEqual(symbolicMatch('\\frac{x^2-4}{x-2}', 'x+2', options), { equal: true, method: 'random_points' })
  assert.deepEqual(symbolicMatch('(x, 2x)', '(x, x+x)', options), { equal: true, method: 'random_points' })
  assert.deepEqual(
    symbolicMatch('\\frac{x}{x-x}', '\\frac{1}{0x}', options),
    { equal: false, method: 'random_points' },
    'undefined at every point: nothing checked'
  )
  assert.deepEqual(
    symbolicMatch('\\frac{1}{\\sqrt{x-3}}', '\\frac{\\sqrt{x-3}}{x-3}', options),
    { equal: true, method: 'random_points' },
    'values off the real line compare as complex numbers'
  )
  assert.deepEqual(symbolicMatch('(1+i)x', 'x + ix', options), { equal: true, method: 'random_points' })
})

test('an invalid parse is never equal, even to itself', () => {
  assert.deepEqual(symbolicMatch('x+', 'x+', options), { equal: false, method: 'invalid' })
  assert.deepEqual(equationsMatch({ lhs: 'x+', rhs: '1' }, { lhs: 'x', rhs: '1' }, options), {
    equal: false,
    method: 'invalid'
  })
})

test('equations: side differences that are constant multiples', () => {
  assert.deepEqual(equationsMatch({ lhs: '2y', rhs: '4x+2' }, { lhs: 'y', rhs: '2x+1' }, options), {
    equal: true,
    method: 'equation'
  })
  assert.deepEqual(equationsMatch({ lhs: 'x^2', rhs: '9' }, { lhs: 'x', rhs: '3' }, options), {
    equal: false,
    method: 'equation'
  })
  assert.deepEqual(
    equationsMatch({ lhs: '1', rhs: '1' }, { lhs: '2', rhs: '2' }, options),
    { equal: false, method: 'equation' },
    'no unknown'
  )
})

test('a comparison past its step budget throws, and the reward answers it as timeout', () => {
  const sum = '\\sum_{n=1}^{10^{7}} \\frac{1}{n^2}'
  assert.throws(() => symbolicMatch(sum, '\\frac{\\pi^2}{6}', options), BudgetExceededError)
  assert.deepEqual(
    answersMatch(sum, '\\frac{\\pi^2}{6}', { timeLimitMs: 60_000 }),
    { equal: false, method: 'timeout' },
    'the step count, not the clock'
  )
  assert.deepEqual(
    answersMatch('\\sum_{n=1}^{100} n', '5050'),
    { equal: true, method: 'symbolic' },
    'a sum within the budget'
  )
})
