/**
 * Where a body stops being JSON, for the edge's 400: the line and column (1-based) of the first character that breaks
 * RFC 8259's grammar, and what was expected there. Read by one pass over the text with an explicit stack (a body
 * nested a million levels deep is scanned, not recursed into); run only on a body the JSON parser refused.
 */

/** A JSON number, at a position (sticky). */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])
const HEX4 = /^[0-9a-fA-F]{4}$/

/** Where `text` breaks JSON's grammar: `line L, column C: what`; undefined when it does not. */
export function jsonSyntaxError(text: string): string | undefined {
  const fail = (at: number, what: string): string => {
    let line = 1
    let lineStart = 0
    for (let i = 0; i < at && i < text.length; i++)
      if (text[i] === '\n') {
        line++
        lineStart = i + 1
      }
    return `line ${line}, column ${at - lineStart + 1}: ${what}`
  }
  const shown = (at: number): string =>
    at >= text.length ? 'the end of the body' : JSON.stringify(String.fromCodePoint(text.codePointAt(at) ?? 0))
  let i = 0
  const space = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++
  }
  /** A string from its opening quote at `i`; undefined when it is whole, else why not. */
  const string = (): string | undefined => {
    i++
    for (;;) {
      if (i >= text.length) return fail(i, 'a string not closed with "')
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return undefined
      }
      if (c < 0x20) return fail(i, 'a control character in a string (escape it: \\n, \\t, \\u00XX)')
      if (c === 0x5c) {
        const e = text[i + 1] ?? ''
        if (e === 'u') {
          if (!HEX4.test(text.slice(i + 2, i + 6))) return fail(i, 'a \\u escape without four hex digits')
          i += 6
        } else if (ESCAPES.has(e)) i += 2
        else return fail(i, `an unknown escape \\${e}`)
      } else i++
    }
  }
  const stack: Array<'object' | 'array'> = []
  let state: 'value' | 'key' | 'after' = 'value'
  space()
  for (;;) {
    if (state === 'value') {
      const c = text[i]
      if (c === '{' || c === '[') {
        stack.push(c === '{' ? 'object' : 'array')
        i++
        space()
        if (text[i] === (c === '{' ? '}' : ']')) {
          stack.pop()
          i++
          state = 'after'
        } else state = c === '{' ? 'key' : 'value'
      } else if (c === '"') {
        const bad = string()
        if (bad !== undefined) return bad
        state = 'after'
      } else if (c === '-' || (c >= '0' && c <= '9')) {
        NUMBER.lastIndex = i
        if (!NUMBER.test(text)) return fail(i, 'a number that is not one')
        i = NUMBER.lastIndex
        state = 'after'
      } else if (text.startsWith('true', i) || text.startsWith('null', i)) {
        i += 4
        state = 'after'
      } else if (text.startsWith('false', i)) {
        i += 5
        state = 'after'
      } else return fail(i, `${shown(i)} where a value was expected`)
    } else if (state === 'key') {
      space()
      if (text[i] !== '"') return fail(i, `${shown(i)} where a property name in double quotes was expected`)
      const bad = string()
      if (bad !== undefined) return bad
      space()
      if (text[i] !== ':') return fail(i, `${shown(i)} where ':' was expected after a property name`)
      i++
      space()
      state = 'value'
    } else {
      space()
      const top = stack.at(-1)
      if (top === undefined) return i < text.length ? fail(i, `${shown(i)} after the end of the JSON value`) : undefined
      const close = top === 'object' ? '}' : ']'
      if (text[i] === ',') {
        i++
        space()
        state = top === 'object' ? 'key' : 'value'
      } else if (text[i] === close) {
        stack.pop()
        i++
      } else return fail(i, `${shown(i)} where ',' or '${close}' was expected`)
    }
  }
}
