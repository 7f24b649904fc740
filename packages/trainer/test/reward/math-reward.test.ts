import { test } from 'node:test'
import assert from 'node:assert/strict'
import { answersMatch, extractAnswer, lastBoxed, mathReward } from '@sandfleet/trainer'

/** [candidate, reference, equal]: the table the issue asks for (≥ 60 pairs). */
const PAIRS: Array<[string, string, boolean]> = [
  // fractions
  ['\\frac{1}{2}', '0.5', true],
  ['\\dfrac{3}{4}', '\\frac34', true],
  ['\\tfrac{6}{8}', '\\frac{3}{4}', true],
  ['1/2', '\\frac{1}{2}', true],
  ['\\frac{2}{4}', '\\frac{1}{2}', true],
  ['-\\frac{1}{3}', '\\frac{-1}{3}', true],
  ['\\frac{1}{3}', '0.333', false],
  ['\\frac{3}{2}', '\\frac{2}{3}', false],
  // roots
  ['\\sqrt{8}', '2\\sqrt{2}', true],
  ['\\sqrt{12}', '2\\sqrt3', true],
  ['\\frac{\\sqrt{2}}{2}', '\\frac{1}{\\sqrt{2}}', true],
  ['\\sqrt{2}', '1.41421356237', true],
  ['\\sqrt{3}', '\\sqrt{2}', false],
  ['3\\sqrt{2}', '\\sqrt{18}', true],
  // pi
  ['\\frac{\\pi}{2}', '\\pi/2', true],
  ['2\\pi', '\\pi \\cdot 2', true],
  ['\\frac{\\pi}{3}', '60', false],
  ['\\pi', '3.14', false],
  // intervals
  ['[1, 2)', '\\left[1, 2\\right)', true],
  ['(-\\infty, 3]', '\\left(-\\infty,3\\right]', true],
  ['[0, 1]', '(0, 1)', false],
  ['[2, 5)', '(2, 5]', false],
  // sets and tuples
  ['\\{1, 2\\}', '\\{2, 1\\}', true],
  ['\\{1, 2, 3\\}', '\\{1, 2\\}', false],
  ['(1, 2)', '(1,2)', true],
  ['(1, 2)', '(2, 1)', false],
  // percent and degrees
  ['50\\%', '50', true],
  ['12.5\\%', '12.5', true],
  ['30^\\circ', '30', true],
  ['45^{\\circ}', '45', true],
  // units-free numbers
  ['5 \\text{ cm}', '5', true],
  ['12\\text{ inches}', '12', true],
  ['\\$18.90', '18.90', true],
  ['7 \\text{ days}', '8', false],
  // leading zeros and decimals
  ['007', '7', true],
  ['0.50', '0.5', true],
  ['.5', '0.5', true],
  ['2.000', '2', true],
  ['0.1', '0.01', false],
  // thousands separators
  ['1,000', '1000', true],
  ['1{,}000{,}000', '1000000', true],
  ['12,345.5', '12345.5', true],
  ['1,001', '1000', false],
  // negatives
  ['-5', '-5', true],
  ['-(3)', '-3', true],
  ['- 2', '-2', true],
  ['-2', '2', false],
  // variables and assignments
  ['x = 5', '5', true],
  ['k=-4', '-4', true],
  // equivalent expressions (symbolic or random points)
  ['2x+1', '1+2x', true],
  ['x^2-1', '(x-1)(x+1)', true],
  ['(a+b)^2', 'a^2+2ab+b^2', true],
  ['\\sin^2 x + \\cos^2 x', '1', true],
  ['\\frac{x^2-4}{x-2}', 'x+2', true],
  ['e^{i\\pi}', '-1', true],
  ['\\log_2 8', '3', true],
  ['2^{10}', '1024', true],
  ['x^2+1', 'x^2-1', false],
  ['(a-b)^2', 'a^2-b^2', false],
  ['2x', 'x+2', false],
  // text answers
  ['\\text{Monday}', 'Monday', true],
  ['\\text{even}', 'Even', true],
  ['odd', 'even', false],
  // multiple choice
  ['(B)', 'B', true],
  ['\\text{(C)}', 'C', true],
  ['D) 42', 'D', true],
  ['A', 'B', false],
  // more forms seen in model outputs
  ['\\left(\\frac{1}{2}, 3\\right)', '(0.5, 3)', true],
  ['x \\in [1, 2]', '[1,2]', true],
  ['\\sqrt[3]{8}', '2', true],
  ['10^{-3}', '0.001', true],
  ['2 \\times 10^3', '2000', true],
  ['0.\\overline{3}', '\\frac{1}{3}', true],
  ['\\$1,000', '1000', true],
  ['(-\\infty, 2) \\cup (3, \\infty)', '(-\\infty,2)\\cup(3,\\infty)', true],
  ['(-\\infty, 2) \\cup (3, \\infty)', '(-\\infty,2]\\cup(3,\\infty)', false],
  ['-\\infty', '\\infty', false],
  ['\\emptyset', '\\varnothing', true],
  ['\\sin(2x)', '2\\sin x \\cos x', true],
  ['2^{1/2}', '\\sqrt{2}', true],
  ['3.14159', '\\pi', false],
  ['20\\%', '0.2', false],
  ['\\frac{\\pi}{4}', '45^\\circ', false],
  // unordered answer lists and sets
  ['3, 5', '5, 3', true],
  ['\\{3, 4\\}', '3, 4', true],
  ['1, 2', '1, 2, 3', false],
  ['\\frac{1}{2}, 2', '2, 0.5', true],
  // matrices: a row break followed by a space is a row break, not a spacing command
  ['\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}', '\\begin{pmatrix}1\\\\2\\end{pmatrix}', true],
  ['\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}', '\\begin{pmatrix}2\\\\1\\end{pmatrix}', false],
  ['\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}', '\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}', true],
  // invalid or empty answers never match
  ['x+', '1', false],
  ['', '0', false],
  ['\\frac{1}{', '\\frac{1}{2}', false]
]

test(`answers compare correctly on a table of ${PAIRS.length} LaTeX pairs`, () => {
  assert.ok(PAIRS.length >= 60)
  assert.ok(PAIRS.filter((p) => !p[2]).length >= 15, 'non-equivalent pairs are a good share')
  const wrong: string[] = []
  for (const [a, b, expected] of PAIRS) {
    const got = answersMatch(a, b)
    if (got.equal !== expected) wrong.push(`${a} vs ${b}: expected ${expected}, got ${got.equal} (${got.method})`)
  }
  assert.deepEqual(wrong, [])
})

test('the fast path decides plain numbers without the symbolic engine; symbolic only when needed', () => {
  assert.equal(answersMatch('0.50', '0.5').method, 'number')
  assert.equal(answersMatch('1,000', '1000').method, 'string')
  assert.equal(answersMatch('x = 5', '5').method, 'string')
  assert.equal(answersMatch('\\sqrt{8}', '2\\sqrt{2}').method, 'symbolic')
  assert.equal(answersMatch('\\frac{x^2-4}{x-2}', 'x+2').method, 'random_points')
  assert.equal(answersMatch('x+', '1').method, 'invalid')
})

test('the last \\boxed{} is found with brace matching, inside the last <answer> block', () => {
  assert.equal(lastBoxed('first \\boxed{1} then \\boxed{\\frac{1}{2}}'), '\\frac{1}{2}')
  assert.equal(lastBoxed('\\boxed{\\{1, 2\\}}'), '\\{1, 2\\}')
  assert.equal(lastBoxed('\\boxed 5'), '5')
  assert.equal(lastBoxed('\\boxed{unclosed'), undefined)
  assert.equal(
    extractAnswer('\\boxed{9} <answer>so \\boxed{3}</answer> later \\boxed{7}'),
    '3',
    'the answer block wins'
  )
  assert.equal(extractAnswer('<answer> 42 </answer>'), '42', 'a block without a box gives its text')
  assert.equal(extractAnswer('no answer here'), undefined)
  assert.deepEqual(mathReward('<answer>The result is \\boxed{\\dfrac{1}{2}}</answer>', '0.5'), {
    reward: 1,
    answer: '\\dfrac{1}{2}',
    method: 'number'
  })
  assert.equal(mathReward('I think 0.5', '0.5').reward, 0, 'no extracted answer, no reward')
})

test('a symbolic comparison is bounded by its time limit', () => {
  const started = Date.now()
  const r = answersMatch('\\sum_{n=1}^{10^{7}} \\frac{1}{n^2}', '\\frac{\\pi^2}{6}', { timeLimitMs: 50 })
  assert.equal(r.equal, false)
  assert.ok(Date.now() - started < 5000, 'the comparison returned instead of running on')
})
