/**
 * Evaluating a {@link MathNode} in complex floating point at given values of its variables.
 * Numbers evaluate to a {@link Complex} (NaN where undefined: `0/0`, a pole, arithmetic on a
 * tuple); tuples, lists, sets, unions and matrices evaluate item by item. Every node evaluated
 * spends a step of the {@link StepBudget}.
 */
import type { StepBudget } from './budget.ts'
import * as C from './complex.ts'
import type { FunctionName, MathNode } from './tree.ts'

type Complex = C.Complex

/** The value of an answer: a number, or a structure of values. */
export type MathValue =
  | Complex
  | { kind: 'tuple'; open: '(' | '['; close: ')' | ']'; items: MathValue[] }
  | { kind: 'list' | 'set' | 'union'; items: MathValue[] }
  | { kind: 'matrix'; rows: MathValue[][] }
  | { kind: 'empty' }

/** True when `v` is a number rather than a structure. */
export function isNumber(v: MathValue): v is Complex {
  return !('kind' in v)
}

/** Lanczos' approximation (g = 7, 9 terms) of Γ(x) for real x, with the reflection formula below 1/2. */
function gamma(x: number): number {
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x))
  const p = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7
  ]
  const y = x - 1
  let a = p[0]
  for (let k = 1; k < p.length; k++) a += p[k] / (y + k)
  const t = y + 7.5
  return Math.sqrt(2 * Math.PI) * Math.pow(t, y + 0.5) * Math.exp(-t) * a
}

/**
 * `n!` of a real: exact for integers up to 170 (∞ above, which {@link checked} makes NaN), Γ(n + 1) between them; NaN
 * at the poles.
 */
function factorial(z: Complex): Complex {
  if (z.im !== 0) return C.NAN
  const n = z.re
  if (!Number.isInteger(n)) return Number.isFinite(n) ? C.complex(gamma(n + 1)) : C.NAN
  if (n < 0) return C.NAN
  if (n > 170) return C.complex(Number.POSITIVE_INFINITY)
  let product = 1
  for (let k = 2; k <= n; k++) product *= k
  return C.complex(product)
}

/**
 * `\binom{n}{k}` of reals: the multiplicative formula for integers (each partial product is itself a binomial, so
 * exact), Γ otherwise.
 */
function binomial(n: Complex, k: Complex, budget: StepBudget): Complex {
  if (n.im !== 0 || k.im !== 0) return C.NAN
  if (Number.isInteger(n.re) && Number.isInteger(k.re) && n.re >= 0) {
    if (k.re < 0 || k.re > n.re) return C.complex(0)
    const m = Math.min(k.re, n.re - k.re)
    budget.reserve(m)
    let c = 1
    for (let j = 1; j <= m; j++) c = (c * (n.re - m + j)) / j
    budget.step(m)
    return C.complex(c)
  }
  return C.complex(gamma(n.re + 1) / (gamma(k.re + 1) * gamma(n.re - k.re + 1)))
}

const real =
  (f: (x: number) => number) =>
  (z: Complex): Complex =>
    z.im === 0 ? C.complex(f(z.re)) : C.NAN
const ONE = C.complex(1)
const reciprocal =
  (f: (z: Complex) => Complex) =>
  (z: Complex): Complex =>
    C.div(ONE, f(z))
const ofReciprocal =
  (f: (z: Complex) => Complex) =>
  (z: Complex): Complex =>
    f(C.div(ONE, z))

/** The functions of one argument. */
const UNARY: Readonly<Record<Exclude<FunctionName, 'log' | 'root' | 'binom'>, (z: Complex) => Complex>> = {
  sin: C.sin,
  cos: C.cos,
  tan: C.tan,
  sec: reciprocal(C.cos),
  csc: reciprocal(C.sin),
  cot: (z) => C.div(C.cos(z), C.sin(z)),
  asin: C.asin,
  acos: C.acos,
  atan: C.atan,
  asec: ofReciprocal(C.acos),
  acsc: ofReciprocal(C.asin),
  acot: ofReciprocal(C.atan),
  sinh: C.sinh,
  cosh: C.cosh,
  tanh: C.tanh,
  exp: C.exp,
  ln: C.log,
  sqrt: C.sqrt,
  abs: (z) => C.complex(C.abs(z)),
  floor: real(Math.floor),
  ceil: real(Math.ceil),
  factorial
}

const BINARY: Readonly<Record<'+' | '-' | '*' | '/' | '^', (a: Complex, b: Complex) => Complex>> = {
  '+': C.add,
  '-': C.sub,
  '*': C.mul,
  '/': C.div,
  '^': C.pow
}

/** An integer bound of a sum or product, or undefined. */
function integerBound(z: Complex): number | undefined {
  if (z.im !== 0 || Number.isNaN(z.re)) return undefined
  if (!Number.isFinite(z.re)) return z.re
  const n = Math.round(z.re)
  return Math.abs(z.re - n) <= 1e-9 ? n : undefined
}

const finite = (z: Complex): boolean => Number.isFinite(z.re) && Number.isFinite(z.im)

/** `result` of finite `inputs`, or NaN when it overflowed (`10^{400}` is too large to know, not ∞). */
function checked(result: Complex, inputs: readonly Complex[]): Complex {
  return !finite(result) && !C.isNaNValue(result) && inputs.every(finite) ? C.NAN : result
}

/** The value of `node` with `scope`'s values for its variables (a missing one is NaN). */
export function evaluate(node: MathNode, scope: ReadonlyMap<string, number>, budget: StepBudget): MathValue {
  budget.step()
  const scalar = (n: MathNode, s: ReadonlyMap<string, number> = scope): Complex => {
    const v = evaluate(n, s, budget)
    return isNumber(v) ? v : C.NAN
  }
  switch (node.kind) {
    case 'number':
      return node.value
    case 'variable': {
      const v = scope.get(node.name)
      return v === undefined ? C.NAN : C.complex(v)
    }
    case 'neg':
      return C.neg(scalar(node.arg))
    case 'binary': {
      const a = scalar(node.left)
      const b = scalar(node.right)
      return checked(BINARY[node.op](a, b), [a, b])
    }
    case 'call': {
      const args = node.args.map((a) => scalar(a))
      if (node.fn === 'log') return checked(C.div(C.log(args[1]), C.log(args[0])), args)
      if (node.fn === 'root') return checked(C.root(args[0], args[1]), args)
      if (node.fn === 'binom') return checked(binomial(args[0], args[1], budget), args)
      return checked(UNARY[node.fn](args[0]), args)
    }
    case 'sum':
    case 'product': {
      const from = integerBound(scalar(node.from))
      const to = integerBound(scalar(node.to))
      if (from === undefined || to === undefined || !Number.isFinite(from)) return C.NAN
      budget.reserve(to - from + 1)
      const inner = new Map(scope)
      let acc = C.complex(node.kind === 'sum' ? 0 : 1)
      for (let k = from; k <= to; k++) {
        inner.set(node.index, k)
        acc = node.kind === 'sum' ? C.add(acc, scalar(node.body, inner)) : C.mul(acc, scalar(node.body, inner))
      }
      return checked(acc, [])
    }
    case 'tuple':
      return {
        kind: 'tuple',
        open: node.open,
        close: node.close,
        items: node.items.map((a) => evaluate(a, scope, budget))
      }
    case 'list':
    case 'set':
    case 'union':
      return { kind: node.kind, items: node.items.map((a) => evaluate(a, scope, budget)) }
    case 'matrix':
      return { kind: 'matrix', rows: node.rows.map((r) => r.map((a) => evaluate(a, scope, budget))) }
    case 'empty':
      return { kind: 'empty' }
  }
  return C.NAN
}
