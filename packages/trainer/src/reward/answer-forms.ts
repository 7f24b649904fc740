/**
 * The shapes of a normalised answer the math reward tells apart before comparing values: an
 * equation (`2x - y + 1 = 0`), a value named by its variable (`x = 4`), `±` (`1 \pm \sqrt{2}`:
 * two answers), and lists of several answers.
 */
import { unorderedItems } from './normalize-answer.ts'

/** The two sides of an equation. */
export interface Equation {
  lhs: string
  rhs: string
}

/** Indices of the characters of `s` outside every bracket and LaTeX group. */
function topLevel(s: string, at: (i: number) => void): void {
  let depth = 0
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if (c === '\\') {
      i++
      continue
    }
    if ('([{'.includes(c)) depth++
    else if (')]}'.includes(c)) depth--
    else if (depth === 0) at(i)
  }
}

/**
 * The sides of `s` when it is one equation: a single `=` outside brackets, not part of `<=`, `>=`, `!=` or `==`; else
 * undefined.
 */
export function splitEquation(s: string): Equation | undefined {
  const at: number[] = []
  topLevel(s, (i) => {
    if (s[i] === '=') at.push(i)
  })
  if (at.length !== 1) return undefined
  const i = at[0]
  if ('<>!='.includes(s[i - 1] ?? '') || s[i + 1] === '=') return undefined
  const lhs = s.slice(0, i).trim()
  const rhs = s.slice(i + 1).trim()
  return lhs.length > 0 && rhs.length > 0 ? { lhs, rhs } : undefined
}

/** A lone variable: a letter or a Greek letter's command, with an optional subscript (`x`, `a_1`, `\theta`). */
export function isVariable(s: string): boolean {
  const m = /^(?:[a-zA-Z]|\\([a-zA-Z]+))(?:_\{?\w+\}?)?$/.exec(s)
  return m !== null && !['pi', 'infty', 'emptyset', 'varnothing'].includes(m[1] ?? '')
}

/** True when `variable` (a letter, or a command) occurs in `expression` outside LaTeX command names. */
function mentions(expression: string, variable: string): boolean {
  const name = variable.replace(/_.*$/, '')
  if (name.startsWith('\\')) return new RegExp(`\\${name}(?![a-zA-Z])`).test(expression)
  return expression.replace(/\\[a-zA-Z]+/g, ' ').includes(name)
}

/**
 * The value an equation names, when its left side is a lone variable its right side does not use (`x = 4` → `4`, `y =
 * 3x` → `3x`).
 */
export function assignedValue(e: Equation): string | undefined {
  return isVariable(e.lhs) && !mentions(e.rhs, e.lhs) ? e.rhs : undefined
}

/** True when `s` holds `\pm` or `\mp`. */
export function hasPlusMinus(s: string): boolean {
  return /\\(?:pm|mp)(?![a-zA-Z])/.test(s)
}

/**
 * The two answers `s` names with `\pm` (and `\mp`, its opposite): every `\pm` read as `+` in
 * the first and `-` in the second (one sign throughout, as in `\frac{-b \pm \sqrt{\Delta}}{2a}`);
 * undefined without one.
 */
export function expandPlusMinus(s: string): [string, string] | undefined {
  if (!hasPlusMinus(s)) return undefined
  const sign = (plus: boolean): string =>
    s.replace(/\\(pm|mp)(?![a-zA-Z])/g, (_, op: string) => ((op === 'pm') === plus ? '+' : '-')).trim()
  return [sign(true), sign(false)]
}

/** The answers a normalised answer names: the items of a list or set, each `±` two of them; one item otherwise. */
export function answerItems(s: string): string[] {
  return (unorderedItems(s) ?? [s]).flatMap((x) => expandPlusMinus(x) ?? [x])
}

const COMPARISONS: ReadonlyArray<[RegExp, '<' | '<=' | '>' | '>=']> = [
  [/^(?:\\leqslant|\\leq|\\le|≤|<=)(?![a-zA-Z])/, '<='],
  [/^(?:\\geqslant|\\geq|\\ge|≥|>=)(?![a-zA-Z])/, '>='],
  [/^(?:\\lt|<)(?![a-zA-Z])/, '<'],
  [/^(?:\\gt|>)(?![a-zA-Z])/, '>']
]

/** `s` cut at its comparison signs outside brackets: the parts and the signs between them. */
function comparisons(s: string): { parts: string[]; ops: Array<'<' | '<=' | '>' | '>='> } {
  const parts: string[] = []
  const ops: Array<'<' | '<=' | '>' | '>='> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < s.length; i++) {
    const c = s[i]
    if ('([{'.includes(c)) {
      depth++
      continue
    }
    if (')]}'.includes(c)) {
      depth--
      continue
    }
    if (depth !== 0) {
      if (c === '\\') i++
      continue
    }
    const hit = COMPARISONS.map(([re, op]) => ({ m: re.exec(s.slice(i)), op })).find((x) => x.m !== null)
    if (hit?.m != null) {
      parts.push(s.slice(start, i).trim())
      ops.push(hit.op)
      i += hit.m[0].length - 1
      start = i + 1
    } else if (c === '\\') i++
  }
  parts.push(s.slice(start).trim())
  return { parts, ops }
}

/**
 * An inequality of one variable as its interval (`x \geq 3` → `[3,\infty)`, `-1 < x \le 4` → `(-1,4]`), else undefined.
 */
export function inequalityInterval(s: string): string | undefined {
  const { parts, ops } = comparisons(s)
  if (parts.some((x) => x.length === 0)) return undefined
  const below = (op: string): boolean => op === '<' || op === '<='
  if (ops.length === 1) {
    const [left, right] = parts
    // the variable on the right: flip the sign (`3 \le x` is `x \ge 3`)
    const flip = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as const
    const op = isVariable(left) ? ops[0] : isVariable(right) ? flip[ops[0]] : undefined
    const bound = isVariable(left) ? right : left
    if (op === undefined || isVariable(bound)) return undefined
    if (below(op)) return `(-\\infty,${bound}${op === '<' ? ')' : ']'}`
    return `${op === '>' ? '(' : '['}${bound},\\infty)`
  }
  if (ops.length === 2 && isVariable(parts[1]) && below(ops[0]) === below(ops[1])) {
    const [lo, hi, loOp, hiOp] = below(ops[0])
      ? [parts[0], parts[2], ops[0], ops[1]]
      : [parts[2], parts[0], ops[1], ops[0]]
    const strict = (op: string): boolean => op === '<' || op === '>'
    return `${strict(loOp) ? '(' : '['}${lo},${hi}${strict(hiOp) ? ')' : ']'}`
  }
  return undefined
}
