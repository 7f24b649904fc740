import { test } from 'node:test'
import assert from 'node:assert/strict'
import { StepBudget } from '../../../src/reward/expression/budget.ts'
import type { Complex } from '../../../src/reward/expression/complex.ts'
import { evaluate, isNumber, type MathValue } from '../../../src/reward/expression/evaluate.ts'
import { parseMath } from '../../../src/reward/expression/parse.ts'

function value(s: string, scope: Record<string, number> = {}): MathValue {
  const node = parseMath(s)
  assert.ok(node !== undefined, `${s} parses`)
  return evaluate(node, new Map(Object.entries(scope)), new StepBudget(1_000_000, 60_000))
}

function number(s: string, scope: Record<string, number> = {}): Complex {
  const v = value(s, scope)
  assert.ok(isNumber(v), `${s} is a number`)
  return v
}

const real = (s: string, scope: Record<string, number> = {}): number => {
  const z = number(s, scope)
  assert.ok(Math.abs(z.im) < 1e-12, `${s} is real`)
  return z.re
}

test('arithmetic, roots, powers, logarithms and trigonometry in floating point', () => {
  assert.equal(real('3\\frac{1}{2}'), 3.5)
  assert.equal(real('\\sqrt[3]{27}'), 3)
  assert.equal(real('\\sqrt[3]{-8}'), -2)
  assert.ok(Math.abs(real('\\log_2 8') - 3) < 1e-15)
  assert.ok(Math.abs(real('\\cos\\frac{\\pi}{3}') - 0.5) < 1e-15)
  assert.ok(Math.abs(real('\\sin^2 x + \\cos^2 x', { x: 1.3 }) - 1) < 1e-15)
  assert.ok(Math.abs(real('\\arctan 1') - Math.PI / 4) < 1e-15)
  assert.equal(real('|2 - 5|'), 3)
  assert.equal(real('\\lceil 2.1 \\rceil'), 3)
  assert.equal(real('0.\\overline{3}') * 3, 1)
})

test('factorials, binomials, sums and products', () => {
  assert.equal(real('5!'), 120)
  assert.ok(Math.abs(real('(1/2)!') - Math.sqrt(Math.PI) / 2) < 1e-13, 'Γ between the integers')
  assert.equal(real('\\binom{5}{2}'), 10)
  assert.equal(real('\\binom{52}{5}'), 2598960)
  assert.ok(Math.abs(real('\\binom{x}{2}', { x: 2.5 }) - (2.5 * 1.5) / 2) < 1e-12)
  assert.equal(real('\\sum_{n=1}^{4} n^2'), 30)
  assert.equal(real('\\prod_{k=1}^{5} k'), 120)
  assert.equal(real('\\sum_{n=3}^{2} n'), 0, 'an empty sum')
})

test('complex numbers', () => {
  assert.deepEqual(number('3 + 4i'), { re: 3, im: 4 })
  assert.deepEqual(number('\\sqrt{-4}'), { re: 0, im: 2 })
  const z = number('e^{i\\pi}')
  assert.ok(Math.abs(z.re + 1) < 1e-15 && Math.abs(z.im) < 1e-15)
})

test('undefined and too-large values are NaN, infinities are kept', () => {
  assert.ok(Number.isNaN(number('\\frac{1}{0}').re))
  assert.ok(Number.isNaN(number('10^{400}').re), 'an overflow is not infinity')
  assert.ok(Number.isNaN(number('200!').re))
  assert.ok(Number.isNaN(number('(-1)!').re))
  assert.ok(Number.isNaN(number('(1, 2) + 1').re), 'arithmetic on a tuple')
  assert.ok(Number.isNaN(number('\\sum_{n=1}^{x} n', { x: 1.5 }).re), 'a bound that is not an integer')
  assert.equal(real('-\\infty'), Number.NEGATIVE_INFINITY)
  assert.equal(real('\\infty + 1'), Number.POSITIVE_INFINITY)
})

test('structures evaluate item by item', () => {
  assert.deepEqual(value('(\\frac12, 1]'), {
    kind: 'tuple',
    open: '(',
    close: ']',
    items: [
      { re: 0.5, im: 0 },
      { re: 1, im: 0 }
    ]
  })
  assert.deepEqual(value('\\begin{bmatrix} x & 2x \\end{bmatrix}', { x: 2 }), {
    kind: 'matrix',
    rows: [
      [
        { re: 2, im: 0 },
        { re: 4, im: 0 }
      ]
    ]
  })
  assert.deepEqual(value('\\{1\\} \\cup \\emptyset'), {
    kind: 'union',
    items: [{ kind: 'set', items: [{ re: 1, im: 0 }] }, { kind: 'empty' }]
  })
})
