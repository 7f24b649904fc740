import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  answerItems,
  assignedValue,
  expandPlusMinus,
  inequalityInterval,
  isVariable,
  splitEquation
} from '@sandfleet/trainer'

test('an equation is one = outside brackets, not part of a comparison', () => {
  assert.deepEqual(splitEquation('2x - y + 1 = 0'), { lhs: '2x - y + 1', rhs: '0' })
  assert.deepEqual(splitEquation('f(x) = \\frac{a}{b}'), { lhs: 'f(x)', rhs: '\\frac{a}{b}' })
  assert.equal(splitEquation('x = 2, x = -2'), undefined, 'two equations')
  assert.equal(splitEquation('x <= 2'), undefined)
  assert.equal(splitEquation('x == 2'), undefined)
  assert.equal(splitEquation('= 2'), undefined, 'a side is missing')
})

test('a value named by its variable: the variable alone on the left, not used on the right', () => {
  assert.equal(isVariable('x'), true)
  assert.equal(isVariable('a_1'), true)
  assert.equal(isVariable('\\theta'), true)
  assert.equal(isVariable('\\pi'), false)
  assert.equal(isVariable('2x'), false)
  assert.equal(assignedValue({ lhs: 'x', rhs: '4' }), '4')
  assert.equal(assignedValue({ lhs: 'y', rhs: '3x' }), '3x')
  assert.equal(assignedValue({ lhs: 'x', rhs: '\\exp(2)' }), '\\exp(2)', 'the x of a command name is no use of x')
  assert.equal(assignedValue({ lhs: 'x', rhs: '2x + 1' }), undefined, 'x = 2x + 1 is an equation to solve')
  assert.equal(assignedValue({ lhs: '2y', rhs: '4' }), undefined)
})

test('± is two answers, one sign throughout; ∓ takes the other sign', () => {
  assert.deepEqual(expandPlusMinus('\\pm 2'), ['+ 2', '- 2'])
  assert.deepEqual(expandPlusMinus('\\frac{-1 \\pm \\sqrt{5}}{2}'), [
    '\\frac{-1 + \\sqrt{5}}{2}',
    '\\frac{-1 - \\sqrt{5}}{2}'
  ])
  assert.deepEqual(expandPlusMinus('4 \\mp 1'), ['4 - 1', '4 + 1'])
  assert.equal(expandPlusMinus('\\pmod{3}'), undefined, '\\pmod is not \\pm')
  assert.deepEqual(answerItems('1 \\pm \\sqrt{2}, 3'), ['1 + \\sqrt{2}', '1 - \\sqrt{2}', '3'])
  assert.deepEqual(answerItems('\\{1, 2\\}'), ['1', '2'])
  assert.deepEqual(answerItems('7'), ['7'])
})

test('inequalities of one variable as intervals', () => {
  assert.equal(inequalityInterval('x < 2'), '(-\\infty,2)')
  assert.equal(inequalityInterval('x \\leq -1'), '(-\\infty,-1]')
  assert.equal(inequalityInterval('x > \\frac{1}{2}'), '(\\frac{1}{2},\\infty)')
  assert.equal(inequalityInterval('t \\geq 0'), '[0,\\infty)')
  assert.equal(inequalityInterval('3 \\le x'), '[3,\\infty)', 'the variable on the right')
  assert.equal(inequalityInterval('-1 < x \\le 4'), '(-1,4]')
  assert.equal(inequalityInterval('4 \\geq x > -1'), '(-1,4]', 'written from the top')
  assert.equal(inequalityInterval('1 < x > 3'), undefined, 'signs that do not bound an interval')
  assert.equal(inequalityInterval('x < y'), undefined, 'two variables')
  assert.equal(inequalityInterval('2x < 4'), undefined, 'not solved for the variable')
  assert.equal(inequalityInterval('(1, 2)'), undefined)
})
