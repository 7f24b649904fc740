/**
 * The math answer reward: extract the final answer, then compare it with the reference by
 * normalised string, by number, and symbolically with `@cortex-js/compute-engine` (invalid parses
 * rejected, a random-point numeric check for expressions with free variables), each symbolic
 * comparison under a time limit.
 */
import { CancellationError, ComputeEngine, type Expression } from '@cortex-js/compute-engine'
import { extractAnswer } from './extract-answer.ts'
import { choiceLetter, normalizeAnswer, parseSimpleNumber, plainText, unorderedItems } from './normalize-answer.ts'
import { seededRandom } from '../algo/seeded-random.ts'

/** How two answers were found equal, or why not. */
export type MatchMethod = 'string' | 'number' | 'choice' | 'text' | 'list' | 'symbolic' | 'random_points' | 'none' | 'invalid' | 'timeout'

/** The outcome of one comparison. */
export interface AnswerMatch { equal: boolean, method: MatchMethod }

/** Options of {@link answersMatch}. */
export interface MatchOptions {
  /** Time limit of the symbolic comparison, ms (default 2000). */
  timeLimitMs?: number
  /** Relative tolerance of numeric comparisons (default 1e-6). */
  tolerance?: number
  /** Random points for expressions with free variables (default 5). */
  points?: number
  /** Longer answers skip the symbolic comparison (default 400 characters). */
  maxSymbolicChars?: number
}

let engine: ComputeEngine | undefined
function ce (): ComputeEngine {
  engine ??= new ComputeEngine()
  return engine
}

function close (x: number, y: number, tol: number): boolean {
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

function symbolic (a: string, b: string, options: Required<MatchOptions>): AnswerMatch {
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
      return { equal: !Number.isNaN(x) && close(x, y, options.tolerance), method: 'symbolic' as const }
    }
    let checked = 0
    for (const p of points(names, options.points)) {
      const x = numeric(ea.subs(p))
      const y = numeric(eb.subs(p))
      if (Number.isNaN(x) && Number.isNaN(y)) continue
      if (!close(x, y, options.tolerance)) return { equal: false, method: 'random_points' as const }
      checked++
    }
    return { equal: checked >= Math.min(3, options.points), method: 'random_points' as const }
  })
}

/** A word answer (`Monday`, `\text{even}`): letters only, no LaTeX command but `\text`. */
function isWordAnswer (s: string): boolean {
  return /^[a-z]{2,}$/i.test(plainText(s)) && !/\\(?!text)/.test(s)
}

/** Every item of `a` matches a distinct item of `b` (same count): unordered answer lists and sets. */
function sameItems (a: readonly string[], b: readonly string[], options: MatchOptions): boolean {
  if (a.length !== b.length) return false
  const left = [...b]
  for (const x of a) {
    const k = left.findIndex((y) => answersMatch(x, y, options).equal)
    if (k < 0) return false
    left.splice(k, 1)
  }
  return true
}

/** Compares an answer with a reference: string, number, choice letter, text, unordered list, then symbolically. */
export function answersMatch (candidate: string, reference: string, options: MatchOptions = {}): AnswerMatch {
  const opts: Required<MatchOptions> = { timeLimitMs: options.timeLimitMs ?? 2000, tolerance: options.tolerance ?? 1e-6, points: options.points ?? 5, maxSymbolicChars: options.maxSymbolicChars ?? 400 }
  const a = normalizeAnswer(candidate)
  const b = normalizeAnswer(reference)
  if (a.length === 0 || b.length === 0) return { equal: false, method: 'none' }
  if (a.replace(/\s+/g, '') === b.replace(/\s+/g, '')) return { equal: true, method: 'string' }
  const x = parseSimpleNumber(a)
  const y = parseSimpleNumber(b)
  if (x !== undefined && y !== undefined) return { equal: close(x, y, 1e-9), method: 'number' }
  const refLetter = /^\(?[A-E]\)?$/.test(b.replace(/\\text\{([^{}]*)\}/, '$1')) ? choiceLetter(b) : undefined
  if (refLetter !== undefined) return { equal: choiceLetter(a) === refLetter, method: 'choice' }
  if (isWordAnswer(b)) return { equal: plainText(a) === plainText(b), method: 'text' }
  const listA = unorderedItems(a)
  const listB = unorderedItems(b)
  if (listA !== undefined && listB !== undefined) return { equal: sameItems(listA, listB, options), method: 'list' }
  if (a.length > opts.maxSymbolicChars || b.length > opts.maxSymbolicChars) return { equal: false, method: 'none' }
  try {
    return symbolic(a, b, opts)
  } catch (err) {
    if (err instanceof CancellationError) return { equal: false, method: 'timeout' }
    return { equal: false, method: 'invalid' }
  }
}

/** The reward of one response and how it was decided. */
export interface MathReward {
  /** 1 when the extracted answer equals the reference, else 0. */
  reward: number
  /** The extracted answer, undefined when none was found. */
  answer?: string
  method: MatchMethod
}

/** rStar2-style binary reward: 1 when the response's final answer equals `reference`. */
export function mathReward (response: string, reference: string, options: MatchOptions = {}): MathReward {
  const answer = extractAnswer(response)
  if (answer === undefined) return { reward: 0, method: 'none' }
  const m = answersMatch(answer, reference, options)
  return { reward: m.equal ? 1 : 0, answer, method: m.method }
}
