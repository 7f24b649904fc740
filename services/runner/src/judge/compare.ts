/**
 * A test's output held against the expected one, in the runner (the program never sees the expected output): text as
 * `compare` says (`lines`, `exact`, `tokens`, `float`), and a call's return value as JSON. A checker's comparison is
 * its own, run in the sandbox (sandbox-judge.ts reads its exit status).
 */
import type { JudgeExpected, ResolvedCompare } from '@sandfleet/protocol'

/** A number as a token of output may write it: digits, a point, an exponent; `inf` and `nan` too. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?(?:inf(?:inity)?|nan)$/i

/**
 * The lines of `text` as `lines` compares them: CRLF read as LF, each line's trailing whitespace and the trailing blank
 * lines dropped.
 */
function significantLines(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n')
  for (let i = 0; i < lines.length; i++) lines[i] = lines[i].replace(/\s+$/, '')
  let end = lines.length
  while (end > 0 && lines[end - 1] === '') end--
  lines.length = end
  return lines
}

/** The whitespace-separated tokens of `text`. */
function tokens(text: string): string[] {
  return text.split(/\s+/).filter((t) => t !== '')
}

/** The value of a numeric token (`inf`, `nan` included), or undefined for any other token. */
function numberOf(token: string): number | undefined {
  if (!NUMBER.test(token)) return undefined
  const t = token.toLowerCase().replace(/^\+/, '')
  if (t.endsWith('nan')) return NaN
  if (t.endsWith('inf') || t.endsWith('infinity')) return t.startsWith('-') ? -Infinity : Infinity
  return Number(token)
}

/** Whether `actual` is `expected` within `tolerance`, absolute or relative to the expected value. */
function closeEnough(actual: number, expected: number, tolerance: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual)
  if (!Number.isFinite(expected)) return actual === expected
  const diff = Math.abs(actual - expected)
  return diff <= tolerance || diff <= tolerance * Math.abs(expected)
}

/** Whether token `actual` is `expected`: numbers within `tolerance`, any other token exactly. */
function sameToken(actual: string, expected: string, tolerance: number): boolean {
  if (actual === expected) return true
  const e = numberOf(expected)
  if (e === undefined) return false
  const a = numberOf(actual)
  return a !== undefined && closeEnough(a, e, tolerance)
}

/** Whether two arrays of strings are equal, item by item. */
function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Whether program output `actual` matches `expected` text under `compare` (not a checker: that is the sandbox's). */
export function sameText(compare: ResolvedCompare, actual: string, expected: string): boolean {
  switch (compare.kind) {
    case 'exact':
      return actual === expected
    case 'tokens':
      return sameList(tokens(actual), tokens(expected))
    case 'float': {
      const a = tokens(actual)
      const e = tokens(expected)
      if (a.length !== e.length) return false
      for (let i = 0; i < a.length; i++) if (!sameToken(a[i], e[i], compare.tolerance)) return false
      return true
    }
    default:
      return sameList(significantLines(actual), significantLines(expected))
  }
}

/** Whether JSON values `a` and `b` are equal (objects by their keys, in any order); numbers within any `tolerance`. */
export function sameJson(a: unknown, b: unknown, tolerance: number | undefined): boolean {
  if (typeof a === 'number' && typeof b === 'number')
    return tolerance === undefined ? a === b : closeEnough(a, b, tolerance)
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bs = b as unknown[]
    if (a.length !== bs.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], bs[i], tolerance)) return false
    return true
  }
  const ao = a as Record<string, unknown>
  const bo = b as Record<string, unknown>
  const keys = Object.keys(ao)
  if (keys.length !== Object.keys(bo).length) return false
  for (const k of keys) if (!Object.hasOwn(bo, k) || !sameJson(ao[k], bo[k], tolerance)) return false
  return true
}

/**
 * Whether a test's output meets its `expected`: printed text as `compare` says, or (`returned`: a call's return value,
 * parsed) the JSON value (numbers within the tolerance of a `float` compare), or the second value APPS accepts.
 */
export function meetsExpected(
  compare: ResolvedCompare,
  expected: JudgeExpected,
  output: { stdout: string; returned?: unknown }
): boolean {
  if ('text' in expected) return sameText(compare, output.stdout, expected.text)
  const tolerance = compare.kind === 'float' ? compare.tolerance : undefined
  if (sameJson(output.returned, expected.json, tolerance)) return true
  return 'or' in expected && sameJson(output.returned, expected.or, tolerance)
}
