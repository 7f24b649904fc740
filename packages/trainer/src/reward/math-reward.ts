/**
 * The math answer reward: extract the final answer, then compare it with the reference by
 * normalised string, `±` and lists of answers (unordered), equations (one a nonzero multiple of
 * the other), a value named by its variable, inequalities as intervals, number, choice letter,
 * word, and finally symbolically with the trainer's own expression parser (invalid parses
 * rejected, a random-point check for expressions with free variables), each symbolic comparison
 * under a step and time budget. A reference of several answers also takes a response that boxes
 * them one by one.
 */
import { answerItems, assignedValue, hasPlusMinus, inequalityInterval, splitEquation } from './answer-forms.ts'
import { extractAnswer, finalBoxes } from './extract-answer.ts'
import { choiceLetter, normalizeAnswer, parseSimpleNumber, plainText, unorderedItems } from './normalize-answer.ts'
import { BudgetExceededError } from './expression/budget.ts'
import { closeTo, equationsMatch, symbolicMatch, VALUE_TOLERANCE } from './symbolic-match.ts'

/** How two answers were found equal, or why not. */
export type MatchMethod =
  | 'string'
  | 'number'
  | 'choice'
  | 'text'
  | 'list'
  | 'equation'
  | 'symbolic'
  | 'random_points'
  | 'none'
  | 'invalid'
  | 'timeout'

/** The outcome of one comparison. */
export interface AnswerMatch {
  equal: boolean
  method: MatchMethod
}

/** Options of {@link answersMatch}. */
export interface MatchOptions {
  /** Time limit of the symbolic comparison, ms (default 2000). */
  timeLimitMs?: number
  /** Relative tolerance of comparisons at random points (default 1e-6); constants agree to {@link VALUE_TOLERANCE}. */
  tolerance?: number
  /** Random points for expressions with free variables (default 5). */
  points?: number
  /** Longer answers skip the symbolic comparison (default 400 characters). */
  maxSymbolicChars?: number
}

/** A word answer (`Monday`, `\text{even}`): letters only, no LaTeX command but `\text`. */
function isWordAnswer(s: string): boolean {
  return /^[a-z]{2,}$/i.test(plainText(s)) && !/\\(?!text)/.test(s)
}

/** Every item of `a` matches a distinct item of `b` (same count): unordered answer lists and sets. */
function sameItems(a: readonly string[], b: readonly string[], options: MatchOptions): boolean {
  if (a.length !== b.length) return false
  const left = [...b]
  for (const x of a) {
    const k = left.findIndex((y) => answersMatch(x, y, options).equal)
    if (k < 0) return false
    left.splice(k, 1)
  }
  return true
}

/** Runs a symbolic comparison: past its budget (steps or time) is `timeout`, anything that throws is `invalid`. */
function bounded(compare: () => AnswerMatch): AnswerMatch {
  try {
    return compare()
  } catch (err) {
    if (err instanceof BudgetExceededError) return { equal: false, method: 'timeout' }
    return { equal: false, method: 'invalid' }
  }
}

/**
 * Compares an answer with a reference: string; `±` and lists as unordered answers; two
 * equations; an equation that names a value against that value; then number, choice letter,
 * text, unordered list, and symbolically.
 */
export function answersMatch(candidate: string, reference: string, options: MatchOptions = {}): AnswerMatch {
  const opts: Required<MatchOptions> = {
    timeLimitMs: options.timeLimitMs ?? 2000,
    tolerance: options.tolerance ?? 1e-6,
    points: options.points ?? 5,
    maxSymbolicChars: options.maxSymbolicChars ?? 400
  }
  let a = normalizeAnswer(candidate)
  let b = normalizeAnswer(reference)
  if (a.length === 0 || b.length === 0) return { equal: false, method: 'none' }
  if (a.replace(/\s+/g, '') === b.replace(/\s+/g, '')) return { equal: true, method: 'string' }
  if (hasPlusMinus(a) || hasPlusMinus(b)) {
    const itemsA = answerItems(a)
    const itemsB = answerItems(b)
    if (itemsA.length > 1 || itemsB.length > 1) return { equal: sameItems(itemsA, itemsB, options), method: 'list' }
  }
  const ea = splitEquation(a)
  const eb = splitEquation(b)
  if (ea !== undefined && eb !== undefined) {
    // the same variable named on both sides (`x = 3, 5` and `x = 5, 3`): compare what it is given
    if (ea.lhs === eb.lhs && assignedValue(ea) !== undefined && assignedValue(eb) !== undefined)
      return answersMatch(ea.rhs, eb.rhs, options)
    if (a.length > opts.maxSymbolicChars || b.length > opts.maxSymbolicChars) return { equal: false, method: 'none' }
    return bounded(() => equationsMatch(ea, eb, opts))
  }
  if (ea !== undefined || eb !== undefined) {
    // one side is an equation: it matches a bare answer only when it names that value (`x = 4` and `4`)
    const named = ea !== undefined ? assignedValue(ea) : assignedValue(eb as NonNullable<typeof eb>)
    if (named === undefined) return { equal: false, method: 'equation' }
    return ea !== undefined ? answersMatch(named, b, options) : answersMatch(a, named, options)
  }
  a = inequalityInterval(a) ?? a
  b = inequalityInterval(b) ?? b
  if (a.replace(/\s+/g, '') === b.replace(/\s+/g, '')) return { equal: true, method: 'string' }
  const x = parseSimpleNumber(a)
  const y = parseSimpleNumber(b)
  if (x !== undefined && y !== undefined) return { equal: closeTo(x, y, VALUE_TOLERANCE), method: 'number' }
  const refLetter = /^\(?[A-E]\)?$/.test(b.replace(/\\text\{([^{}]*)\}/, '$1')) ? choiceLetter(b) : undefined
  if (refLetter !== undefined) return { equal: choiceLetter(a) === refLetter, method: 'choice' }
  if (isWordAnswer(b)) return { equal: plainText(a) === plainText(b), method: 'text' }
  const listA = unorderedItems(a)
  const listB = unorderedItems(b)
  if (listA !== undefined && listB !== undefined) return { equal: sameItems(listA, listB, options), method: 'list' }
  if (a.length > opts.maxSymbolicChars || b.length > opts.maxSymbolicChars) return { equal: false, method: 'none' }
  return bounded(() => symbolicMatch(a, b, opts))
}

/** The reward of one response and how it was decided. */
export interface MathReward {
  /** 1 when the extracted answer equals the reference, else 0. */
  reward: number
  /** The extracted answer, undefined when none was found. */
  answer?: string
  method: MatchMethod
}

/**
 * rStar2-style binary reward: 1 when the response's final answer equals `reference`. When the
 * reference names k ≥ 2 answers (a list, a set, `±`) and the final answer alone does not match,
 * the last k `\boxed{}` of the answer are taken together (`x=\boxed{2}` or `x=\boxed{5}`).
 */
export function mathReward(response: string, reference: string, options: MatchOptions = {}): MathReward {
  const answer = extractAnswer(response)
  if (answer === undefined) return { reward: 0, method: 'none' }
  const m = answersMatch(answer, reference, options)
  if (m.equal) return { reward: 1, answer, method: m.method }
  const k = answerItems(normalizeAnswer(reference)).length
  const boxes = finalBoxes(response)
  if (k >= 2 && boxes.length >= k) {
    const together = boxes.slice(-k).join(', ')
    const all = answersMatch(together, reference, options)
    if (all.equal) return { reward: 1, answer: together, method: all.method }
  }
  return { reward: 0, answer, method: m.method }
}
