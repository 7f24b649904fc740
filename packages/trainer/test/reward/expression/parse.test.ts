import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseMath } from '../../../src/reward/expression/parse.ts'
import { freeVariables, type MathNode } from '../../../src/reward/expression/tree.ts'

/** A compact text of a tree: operators and calls in prefix form. */
function show(n: MathNode | undefined): string {
  if (n === undefined) return 'invalid'
  switch (n.kind) {
    case 'number':
      return n.value.im === 0 ? String(n.value.re) : `${n.value.re}+${n.value.im}i`
    case 'variable':
      return n.name
    case 'neg':
      return `(- ${show(n.arg)})`
    case 'binary':
      return `(${n.op} ${show(n.left)} ${show(n.right)})`
    case 'call':
      return `(${n.fn} ${n.args.map(show).join(' ')})`
    case 'sum':
    case 'product':
      return `(${n.kind} ${n.index} ${show(n.from)} ${show(n.to)} ${show(n.body)})`
    case 'tuple':
      return `${n.open}${n.items.map(show).join(' ')}${n.close}`
    case 'list':
    case 'set':
    case 'union':
      return `(${n.kind} ${n.items.map(show).join(' ')})`
    case 'matrix':
      return `[${n.rows.map((r) => r.map(show).join(' ')).join('; ')}]`
    case 'empty':
      return '∅'
  }
}

test('operators bind as in mathematics; implicit products tighter than / (1/2x is 1/(2x))', () => {
  assert.equal(show(parseMath('1+2\\cdot 3^2')), '(+ 1 (* 2 (^ 3 2)))')
  assert.equal(show(parseMath('-x^2')), '(- (^ x 2))')
  assert.equal(show(parseMath('2^3^2')), '(^ 2 (^ 3 2))')
  assert.equal(show(parseMath('2x(x+1)')), '(* (* 2 x) (+ x 1))')
  assert.equal(show(parseMath('6 \\div 3 \\times 2')), '(* (/ 6 3) 2)')
  assert.equal(show(parseMath('2 \\cdot -3')), '(* 2 (- 3))')
  assert.equal(show(parseMath('1/2x')), '(/ 1 (* 2 x))')
  assert.equal(show(parseMath('6 \\div 2(1+2)')), '(/ 6 (* 2 (+ 1 2)))')
  assert.equal(show(parseMath('\\frac{1}{2}x')), '(* (/ 1 2) x)')
  assert.equal(show(parseMath('x_10 + x_{10}')), '(+ x_10 x_10)')
})

test('LaTeX arguments: braces or one token; a whole number as an exponent', () => {
  assert.equal(show(parseMath('\\frac12')), '(/ 1 2)')
  assert.equal(show(parseMath('\\frac{x+1}{2}')), '(/ (+ x 1) 2)')
  assert.equal(show(parseMath('\\sqrt[3]{8}')), '(root 8 3)')
  assert.equal(show(parseMath('\\sqrt2x')), '(* (sqrt 2) x)')
  assert.equal(show(parseMath('2^10')), '(^ 2 10)')
  assert.equal(show(parseMath('10^-3')), '(^ 10 (- 3))')
  assert.equal(show(parseMath('\\binom{5}{2}')), '(binom 5 2)')
})

test('a whole number before a fraction of whole numbers is a mixed number; otherwise a product', () => {
  assert.equal(show(parseMath('3\\frac{1}{2}')), '(+ 3 (/ 1 2))')
  assert.equal(show(parseMath('2\\frac{x}{3}')), '(* 2 (/ x 3))')
  assert.equal(show(parseMath('0.5\\frac{1}{2}')), '(* 0.5 (/ 1 2))')
})

test('functions: powers, inverses, bases, and arguments without parentheses', () => {
  assert.equal(show(parseMath('\\sin 2x \\cos x')), '(* (sin (* 2 x)) (cos x))')
  assert.equal(show(parseMath('\\sin^2 x')), '(^ (sin x) 2)')
  assert.equal(show(parseMath('\\sin^{-1} x')), '(asin x)')
  assert.equal(show(parseMath('\\sin(x)^2')), '(^ (sin x) 2)')
  assert.equal(show(parseMath('\\log_2 8')), '(log 2 8)')
  assert.equal(show(parseMath('\\log x')), '(log 10 x)')
  assert.equal(show(parseMath('\\ln 2 + 1')), '(+ (ln 2) 1)')
  assert.equal(show(parseMath('sqrt(2)')), '(sqrt 2)')
  assert.equal(show(parseMath('\\operatorname{arccot} 1')), '(acot 1)')
  assert.equal(show(parseMath('(n+1)!')), '(factorial (+ n 1))')
  assert.equal(show(parseMath('|x-1||y|')), '(* (abs (- x 1)) (abs y))')
  assert.equal(show(parseMath('\\lfloor x \\rfloor')), '(floor x)')
})

test('constants, variables with subscripts, Greek letters', () => {
  assert.equal(show(parseMath('e^{i\\pi}')), `(^ ${Math.E} (* 0+1i ${Math.PI}))`)
  assert.equal(show(parseMath('x_1 + a_{n} + \\theta_0')), '(+ (+ x_1 a_n) theta_0)')
  assert.equal(show(parseMath('-\\infty')), '(- Infinity)')
  assert.deepEqual(
    freeVariables(parseMath('\\sum_{i=1}^{n} i x + \\theta')!),
    ['n', 'theta', 'x'],
    'the index is bound, and not the imaginary unit'
  )
})

test('structures: tuples and intervals, lists, sets, unions, matrices, the empty set, the reals', () => {
  assert.equal(show(parseMath('(0, 1]')), '(0 1]')
  assert.equal(show(parseMath('[x]')), 'x', 'one item in matching brackets is a group')
  assert.equal(show(parseMath('3, 5')), '(list 3 5)')
  assert.equal(show(parseMath('\\{1, 2\\}')), '(set 1 2)')
  assert.equal(show(parseMath('(-\\infty, 2) \\cup (3, \\infty)')), '(union ((- Infinity) 2) (3 Infinity))')
  assert.equal(show(parseMath('\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\\\ \\end{pmatrix}')), '[1 2; 3 4]')
  assert.equal(show(parseMath('\\emptyset')), '∅')
  assert.equal(show(parseMath('\\mathbb{R}')), '(-Infinity Infinity)')
  assert.equal(show(parseMath('\\sum_{n=1}^{10} \\frac{1}{n^2} + 1')), '(+ (sum n 1 10 (/ 1 (^ n 2))) 1)')
})

test('what the parser does not read is no parse', () => {
  for (const s of [
    '',
    'x+',
    '\\frac{1}{',
    '(x]',
    '(1, 2',
    'x = 1',
    'x!!',
    '\\text{apples}',
    '\\int x',
    '\\begin{vmatrix} 1 \\end{vmatrix}',
    '\\begin{pmatrix} 1 & 2 \\\\ 3 \\end{pmatrix}',
    "f'(x)",
    '\\mathbb{Z}',
    '\\sum_{1}^{2} 1',
    '('.repeat(20000)
  ]) {
    assert.equal(parseMath(s), undefined, s.slice(0, 40))
  }
})
