/**
 * The symbolic comparisons of the math reward, with `@cortex-js/compute-engine`: two expressions
 * (equal symbolically, or in value at random points when they have free variables), and two
 * equations (equal when one side-difference is a nonzero constant multiple of the other). Each
 * runs under a time limit; invalid parses are never equal.
 */
import { ComputeEngine, type Expression } from '@cortex-js/compute-engine'
import { seededRandom } from '../algo/seeded-random.ts'
import type { Equation } from './answer-forms.ts'

/** What a symbolic comparison found. */
export interface SymbolicMatch { equal: boolean, method: 'symbolic' | 'random_points' | 'equation' | 'invalid' }

/** Limits of a symbolic comparison. */
export interface SymbolicOptions {
  /** Time limit, ms. */
  timeLimitMs: number
  /** Relative tolerance of numeric comparisons. */
  tolerance: number
  /** Random points for expressions with free variables. */
  points: number
}

let engine: ComputeEngine | undefined
function ce (): ComputeEngine {
  engine ??= new ComputeEngine()
  return engine
}

/** `x` and `y` agree within the relative tolerance `tol` (infinities only with themselves). */
export function closeTo (x: number, y: number, tol: number): boolean {
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y
  return Math.abs(x - y) <= tol * Math.max(1, Math.abs(x), Math.abs(y))
}

function numeric (e: Expression): number {
  const v = e.N()
  const re = v.re
  const im = v.im
  return typeof im === 'number' && Math.abs(im) > 1e-12 ? Number.NaN : re
}

/** Deterministic points in [0.5, 2.5] per variable: no zeros or negatives for roots and logs. */
function points (names: readonly string[], n: number): Array<Record<string, number>> {
  const next = seededRandom(0x9e3779b9)
  return Array.from({ length: n }, () => Object.fromEntries(names.map((v) => [v, 0.5 + 2 * next()])))
}

/** Compares two LaTeX expressions; throws the engine's `CancellationError` past the time limit. */
export function symbolicMatch (a: string, b: string, options: SymbolicOptions): SymbolicMatch {
  const engineNow = ce()
  return engineNow.withTimeLimit({ ms: options.timeLimitMs, label: 'sandfleet:answer' }, () => {
    const ea = engineNow.parse(a)
    const eb = engineNow.parse(b)
    if (!ea.isValid || !eb.isValid) return { equal: false, method: 'invalid' as const }
    const eq = ea.isEqual(eb)
    if (eq !== undefined) return { equal: eq, method: 'symbolic' as const }
    const names = [...new Set([...ea.unknowns, ...eb.unknowns])]
    if (names.length === 0) {
      const x = numeric(ea)
      const y = numeric(eb)
      return { equal: !Number.isNaN(x) && closeTo(x, y, options.tolerance), method: 'symbolic' as const }
    }
    let checked = 0
    for (const p of points(names, options.points)) {
      const x = numeric(ea.subs(p))
      const y = numeric(eb.subs(p))
      if (Number.isNaN(x) && Number.isNaN(y)) continue
      if (!closeTo(x, y, options.tolerance)) return { equal: false, method: 'random_points' as const }
      checked++
    }
    return { equal: checked >= Math.min(3, options.points), method: 'random_points' as const }
  })
}

/**
 * Compares two equations: equal when (lhs − rhs) of one is a nonzero constant multiple of the
 * other's, checked at random points (at least 3 where both are defined and not both zero); throws
 * the engine's `CancellationError` past the time limit.
 */
export function equationsMatch (a: Equation, b: Equation, options: SymbolicOptions): SymbolicMatch {
  const engineNow = ce()
  return engineNow.withTimeLimit({ ms: options.timeLimitMs, label: 'sandfleet:answer' }, () => {
    const f = engineNow.parse(`(${a.lhs})-(${a.rhs})`)
    const g = engineNow.parse(`(${b.lhs})-(${b.rhs})`)
    if (!f.isValid || !g.isValid) return { equal: false, method: 'invalid' as const }
    const names = [...new Set([...f.unknowns, ...g.unknowns])]
    if (names.length === 0) return { equal: false, method: 'equation' as const } // no unknown: not an equation to solve
    const tiny = 1e-12
    let ratio: number | undefined
    let checked = 0
    for (const p of points(names, options.points + 3)) {
      const x = numeric(f.subs(p))
      const y = numeric(g.subs(p))
      if (Number.isNaN(x) || Number.isNaN(y)) continue
      if (Math.abs(x) <= tiny && Math.abs(y) <= tiny) continue // a point on both curves says nothing of the ratio
      if (Math.abs(x) <= tiny || Math.abs(y) <= tiny) return { equal: false, method: 'equation' as const }
      const r = x / y
      if (ratio !== undefined && !closeTo(r, ratio, options.tolerance)) return { equal: false, method: 'equation' as const }
      ratio = r
      checked++
    }
    return { equal: checked >= 3, method: 'equation' as const }
  })
}
