/**
 * The symbolic comparisons of the math reward, on the trainer's own expression parser
 * (`expression/`): two expressions (equal in value when constant, or at random points when they
 * have free variables), and two equations (equal when one side-difference is a nonzero constant
 * multiple of the other). Values are complex: off the real line they still compare (`(1+i)x` and
 * `x + ix`); a point where both sides are undefined is skipped. Each comparison runs under a
 * {@link StepBudget}; invalid parses are never equal.
 */
import { seededRandom } from '../algo/seeded-random.ts'
import type { Equation } from './answer-forms.ts'
import { StepBudget } from './expression/budget.ts'
import { isNaNValue, type Complex } from './expression/complex.ts'
import { evaluate, isNumber, type MathValue } from './expression/evaluate.ts'
import { parseMath } from './expression/parse.ts'
import { freeVariables } from './expression/tree.ts'

/** What a symbolic comparison found. */
export interface SymbolicMatch {
  equal: boolean
  method: 'symbolic' | 'random_points' | 'equation' | 'invalid'
}

/** Limits of a symbolic comparison. */
export interface SymbolicOptions {
  /** Time limit, ms. */
  timeLimitMs: number
  /** Relative tolerance of comparisons at random points. */
  tolerance: number
  /** Random points for expressions with free variables. */
  points: number
}

/**
 * Relative tolerance of constant values (`\sqrt{2}` and `1.41421356237` agree, `3.14159` and
 * `\pi` do not): far above floating point's error on an answer's few hundred operations, far
 * below a rounded decimal's.
 */
export const VALUE_TOLERANCE = 1e-9

/** Evaluation steps one comparison may spend (every node at every point, every term of a sum). */
const MAX_STEPS = 1_000_000

/** `x` and `y` agree within the relative tolerance `tol` (infinities only with themselves). */
export function closeTo(x: number, y: number, tol: number): boolean {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y
  return Math.abs(x - y) <= tol * Math.max(1, Math.abs(x), Math.abs(y))
}

/** Two complex numbers agree within `tol`, relative to the larger modulus (reals as {@link closeTo}). */
function complexClose(a: Complex, b: Complex, tol: number): boolean {
  if (a.im === 0 && b.im === 0) return closeTo(a.re, b.re, tol)
  if (![a.re, a.im, b.re, b.im].every(Number.isFinite)) return a.re === b.re && a.im === b.im
  return Math.hypot(a.re - b.re, a.im - b.im) <= tol * Math.max(1, Math.hypot(a.re, a.im), Math.hypot(b.re, b.im))
}

/** How two values compare: `undefined` when both are undefined somewhere (NaN) and agree elsewhere. */
type Agreement = 'equal' | 'differ' | 'undefined'

const all = (xs: Agreement[]): Agreement =>
  xs.includes('differ') ? 'differ' : xs.includes('undefined') ? 'undefined' : 'equal'

/** Each of `a` agrees with a distinct item of `b`, in any order. */
function unordered(a: readonly MathValue[], b: readonly MathValue[], tol: number): Agreement {
  if (a.length !== b.length) return 'differ'
  const left = [...b]
  const found: Agreement[] = []
  for (const x of a) {
    const k = left.findIndex((y) => compareValues(x, y, tol) !== 'differ')
    if (k < 0) return 'differ'
    found.push(compareValues(x, left[k], tol))
    left.splice(k, 1)
  }
  return all(found)
}

/** Compares two values: numbers within `tol`; tuples and matrices item by item; lists, sets and unions in any order. */
function compareValues(a: MathValue, b: MathValue, tol: number): Agreement {
  if (isNumber(a) || isNumber(b)) {
    if (!isNumber(a) || !isNumber(b)) return 'differ'
    if (isNaNValue(a) || isNaNValue(b)) return isNaNValue(a) && isNaNValue(b) ? 'undefined' : 'differ'
    return complexClose(a, b, tol) ? 'equal' : 'differ'
  }
  switch (a.kind) {
    case 'empty':
      return b.kind === 'empty' ? 'equal' : 'differ'
    case 'tuple':
      if (b.kind !== 'tuple' || a.open !== b.open || a.close !== b.close || a.items.length !== b.items.length)
        return 'differ'
      return all(a.items.map((x, k) => compareValues(x, b.items[k], tol)))
    case 'matrix':
      if (
        b.kind !== 'matrix' ||
        a.rows.length !== b.rows.length ||
        a.rows.some((r, k) => r.length !== b.rows[k].length)
      )
        return 'differ'
      return all(a.rows.flatMap((r, k) => r.map((x, j) => compareValues(x, b.rows[k][j], tol))))
    default:
      return b.kind === a.kind ? unordered(a.items, b.items, tol) : 'differ'
  }
}

/** Deterministic points in [0.5, 2.5] per variable: no zeros or negatives for roots and logs. */
function points(names: readonly string[], n: number): Array<Map<string, number>> {
  const next = seededRandom(0x9e3779b9)
  return Array.from({ length: n }, () => new Map(names.map((v) => [v, 0.5 + 2 * next()])))
}

const NO_VARIABLES: ReadonlyMap<string, number> = new Map()

/** Compares two LaTeX expressions; throws `BudgetExceededError` past the budget. */
export function symbolicMatch(a: string, b: string, options: SymbolicOptions): SymbolicMatch {
  const budget = new StepBudget(MAX_STEPS, options.timeLimitMs)
  const ea = parseMath(a)
  const eb = parseMath(b)
  if (ea === undefined || eb === undefined) return { equal: false, method: 'invalid' }
  const names = [...new Set([...freeVariables(ea), ...freeVariables(eb)])].sort()
  if (names.length === 0) {
    const agreement = compareValues(
      evaluate(ea, NO_VARIABLES, budget),
      evaluate(eb, NO_VARIABLES, budget),
      VALUE_TOLERANCE
    )
    return { equal: agreement === 'equal', method: 'symbolic' }
  }
  let checked = 0
  for (const p of points(names, options.points)) {
    const agreement = compareValues(evaluate(ea, p, budget), evaluate(eb, p, budget), options.tolerance)
    if (agreement === 'undefined') continue
    if (agreement === 'differ') return { equal: false, method: 'random_points' }
    checked++
  }
  return { equal: checked >= Math.min(3, options.points), method: 'random_points' }
}

/** The real number `v` is, or NaN (a structure, or a value off the real line). */
function realValue(v: MathValue): number {
  return isNumber(v) && Math.abs(v.im) <= 1e-12 ? v.re : Number.NaN
}

/**
 * Compares two equations: equal when (lhs − rhs) of one is a nonzero constant multiple of the
 * other's, checked at random points (at least 3 where both are defined and not both zero); throws
 * `BudgetExceededError` past the budget.
 */
export function equationsMatch(a: Equation, b: Equation, options: SymbolicOptions): SymbolicMatch {
  const budget = new StepBudget(MAX_STEPS, options.timeLimitMs)
  const f = parseMath(`(${a.lhs})-(${a.rhs})`)
  const g = parseMath(`(${b.lhs})-(${b.rhs})`)
  if (f === undefined || g === undefined) return { equal: false, method: 'invalid' }
  const names = [...new Set([...freeVariables(f), ...freeVariables(g)])].sort()
  if (names.length === 0) return { equal: false, method: 'equation' } // no unknown: not an equation to solve
  const tiny = 1e-12
  let ratio: number | undefined
  let checked = 0
  for (const p of points(names, options.points + 3)) {
    const x = realValue(evaluate(f, p, budget))
    const y = realValue(evaluate(g, p, budget))
    if (Number.isNaN(x) || Number.isNaN(y)) continue
    if (Math.abs(x) <= tiny && Math.abs(y) <= tiny) continue // a point on both curves says nothing of the ratio
    if (Math.abs(x) <= tiny || Math.abs(y) <= tiny) return { equal: false, method: 'equation' }
    const r = x / y
    if (ratio !== undefined && !closeTo(r, ratio, options.tolerance)) return { equal: false, method: 'equation' }
    ratio = r
    checked++
  }
  return { equal: checked >= 3, method: 'equation' }
}
