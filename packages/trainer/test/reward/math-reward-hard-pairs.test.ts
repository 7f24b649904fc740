import { test } from 'node:test'
import assert from 'node:assert/strict'
import { answersMatch, mathReward } from '@sandfleet/trainer'

/** [candidate, reference, equal, why]: hard answer pairs and the reason for each label. */
const HARD: Array<[string, string, boolean, string]> = [
  // equations: equal when one side-difference is a nonzero multiple of the other
  ['2x - y + 1 = 0', 'y = 2x+1', true, 'the same line with all terms on one side (the reference keeps its y)'],
  ['2y=4x+2', 'y=2x+1', true, 'both sides doubled'],
  ['4x - 2y + 2 = 0', 'y = 2x + 1', true, '−2 times the reference, moved to one side'],
  ['y = 2x', 'y = 2x + 1', false, 'parallel lines'],
  ['x + y = 1', 'x - y = 1', false, 'different lines through one point'],
  ['y = \\frac{3}{4}x - 2', '3x - 4y = 8', true, 'slope-intercept and general form of one line'],
  ['x^2 - 5x + 6 = 0', '(x-2)(x-3) = 0', true, 'the same quadratic, factored'],
  ['x^2 = 9', 'x = 3', false, 'x² = 9 also has −3: no constant multiple'],
  ['0 = y - x', 'y = x', true, 'the sides swapped: a multiple of −1'],
  ['y = 5', 'x = 5', false, 'a horizontal line is not a vertical one'],
  ['y = x + 1', 'x + 1', true, 'the expression named by its function'],
  ['x = -\\frac{1}{2}', '-0.5', true, 'the value named by its variable'],
  ['2x = 10', '5', false, 'an equation still to solve is not its solution'],
  ['x = 3, 5', '5, 3', true, 'two values of one variable, in any order'],
  ['x = 2, x = 7', '7, 2', true, 'each value named by its variable'],
  // ±: two answers
  ['\\pm\\sqrt{3}', '\\sqrt{3}, -\\sqrt{3}', true, '± names both roots'],
  ['-2 \\pm 3', '1, -5', true, '−2 + 3 and −2 − 3'],
  ['\\pm 5', '\\{5, -5\\}', true, 'the set of both'],
  ['x = 1 \\pm 2i', '1+2i, 1-2i', true, 'conjugate roots named by their variable'],
  ['\\pm 1', '1, -1, 0', false, 'two answers for three'],
  ['4 \\mp 1', '3, 5', true, '∓ names both as well'],
  ['\\pm 2', '-2', false, 'two answers for one'],
  // intervals and inequalities
  ['[0, \\infty)', '\\left[0,\\infty\\right)', true, 'sizing commands and spacing'],
  ['(-2, 2)', '[-2, 2]', false, 'open is not closed'],
  ['(-\\infty, 0) \\cup (0, \\infty)', '(-\\infty,0)\\cup(0,\\infty)', true, 'the same union'],
  ['(1, \\sqrt{4}]', '(1, 2]', true, 'an endpoint written as a root'],
  ['[1, 5)', '(1, 5)', false, '1 is in one only'],
  ['x \\le 5', '(-\\infty, 5]', true, 'an inequality and its interval'],
  ['3 < x < 7', '(3,7)', true, 'a double inequality and its interval'],
  ['x > -1', '(-1, \\infty)', true, 'an inequality and its interval'],
  ['x < 5', '(-\\infty, 5]', false, '5 is in the interval, not in the inequality'],
  ['2 \\le x', '[2, \\infty)', true, 'the variable on the right'],
  // sets
  ['\\{-1, 0, 1\\}', '\\{1, 0, -1\\}', true, 'sets are unordered'],
  ['\\{3\\}', '3', true, 'a set of one solution and the solution'],
  ['\\varnothing', '\\{\\}', true, 'two ways to write the empty set'],
  ['\\{2, 3\\}', '\\{2\\}', false, 'an element too many'],
  // units
  ['8 \\text{ meters}', '8', true, 'a unit after the number'],
  ['3.5\\,\\text{km}', '3.5', true, 'a unit after a thin space'],
  ['20 \\text{ apples}', '20', true, 'a unit word of the problem'],
  ['9 \\text{ cm}^3', '9', true, 'a cubed unit'],
  ['40 \\text{ mph}', '45', false, 'a unit does not change the number'],
  // matrices
  [
    '\\begin{bmatrix} 0 & 1 \\\\ 1 & 0 \\end{bmatrix}',
    '\\begin{pmatrix}0&1\\\\1&0\\end{pmatrix}',
    true,
    'brackets or parentheses'
  ],
  [
    '\\begin{pmatrix} 1 \\\\ -1 \\end{pmatrix}',
    '\\begin{pmatrix} -1 \\\\ 1 \\end{pmatrix}',
    false,
    'the entries swapped'
  ],
  [
    '\\begin{pmatrix} \\sqrt{4} & 0 \\\\ 0 & 1 \\end{pmatrix}',
    '\\begin{pmatrix} 2 & 0 \\\\ 0 & 1 \\end{pmatrix}',
    true,
    'an entry written as a root'
  ],
  ['\\begin{pmatrix} 1 & 0 \\end{pmatrix}', '\\begin{pmatrix} 1 \\\\ 0 \\end{pmatrix}', false, 'a row is not a column'],
  // thousands separators
  ['2,000,000', '2000000', true, 'comma separators'],
  ['5{,}280', '5280', true, 'the LaTeX separator'],
  ['1,500.25', '1500.25', true, 'separators and decimals'],
  ['1,050', '1500', false, 'different numbers'],
  ['\\$2,500', '2500', true, 'a dollar sign and a separator'],
  // numbers
  ['3\\frac{1}{2}', '\\frac{7}{2}', true, 'a mixed number'],
  ['\\frac{\\sqrt{2}}{\\sqrt{8}}', '\\frac12', true, 'radicals that simplify'],
  ['\\sqrt[3]{27}', '3', true, 'a cube root'],
  ['10^{3}', '1{,}000', true, 'a power and a separated number'],
  ['-0', '0', true, 'negative zero is zero'],
  ['\\infty', '-\\infty', false, 'opposite infinities'],
  ['1.0e3', '1000', true, 'exponent notation']
]

/** [response, reference, reward, why]: whole responses, where the answer is found first. */
const RESPONSES: Array<[string, string, 0 | 1, string]> = [
  ['$x = \\boxed{-3}$ or $x = \\boxed{3}$', '\\pm 3', 1, 'the two roots of ±, boxed one by one'],
  ['\\boxed{1}, \\boxed{2}, \\boxed{3}', '3, 2, 1', 1, 'three boxes for three answers, in another order'],
  ['\\boxed{4} and \\boxed{9}', '4, 8', 0, 'one of two boxed answers is wrong'],
  ['We find \\boxed{x = 2} and \\boxed{x = -5}', '2, -5', 1, 'each box names its value'],
  ['First \\boxed{6}, then \\boxed{2} and \\boxed{3}.', '2, 3', 1, 'the last two boxes, for two answers'],
  ['\\boxed{2} then \\boxed{8}', '8', 1, 'one answer: the last box'],
  ['\\boxed{2} then \\boxed{8}', '2', 0, 'one answer: an earlier box does not count']
]

test(`hard answer pairs: ${HARD.length} compared and ${RESPONSES.length} responses, each as its reason says`, () => {
  assert.ok(HARD.length + RESPONSES.length >= 60)
  const wrong: string[] = []
  for (const [a, b, expected, why] of HARD) {
    const got = answersMatch(a, b)
    if (got.equal !== expected)
      wrong.push(`${a} vs ${b}: expected ${expected} (${why}), got ${got.equal} (${got.method})`)
  }
  for (const [response, reference, expected, why] of RESPONSES) {
    const got = mathReward(response, reference)
    if (got.reward !== expected)
      wrong.push(`${response} vs ${reference}: expected ${expected} (${why}), got ${got.reward} (${got.method})`)
  }
  assert.deepEqual(wrong, [])
})

test('equations are compared as equations, and a value named by its variable as the value', () => {
  assert.equal(answersMatch('2x - y + 1 = 0', 'y = 2x+1').method, 'equation')
  assert.equal(answersMatch('x = 5', '5').method, 'string')
  assert.equal(answersMatch('2x = 10', '5').method, 'equation')
  assert.equal(answersMatch('\\pm 3', '3, -3').method, 'list')
  assert.deepEqual(mathReward('so $x=\\boxed{2}$ or $x=\\boxed{5}$', '2, 5'), {
    reward: 1,
    answer: '2, 5',
    method: 'string'
  })
})
