/**
 * String and number normalisation of LaTeX answers, the fast path of the math reward: spacing
 * and sizing commands, `\dfrac`, degrees, percent, `\text{}` units, `x \in` prefixes, thousands
 * separators, one-element and empty sets, multiple-choice letters. An `x =` stays: whether it
 * names a value or is part of an equation is the comparison's to decide (`answer-forms.ts`).
 */

/** Strips what does not change an answer's value. The result is still LaTeX. */
export function normalizeAnswer(raw: string): string {
  let s = raw.trim()
  s = s
    .replace(/^\$+|\$+$/g, '')
    .replace(/^\\\(|\\\)$/g, '')
    .replace(/^\\\[|\\\]$/g, '')
    .trim()
  s = s.replace(/\\(?:left|right|big|Big|bigg|Bigg)(?![a-zA-Z])/g, '')
  // `\\` (a row break) is read as one token first, so `\\ 2` never looks like the spacing command `\ `
  s = s.replace(/\\\\|\\displaystyle|\\(?:[,;:!]|\s)/g, (m) => (m === '\\\\' ? m : ' ')).replace(/~/g, ' ')
  s = s.replace(/\\[dt]frac/g, '\\frac')
  s = s.replace(/\^\s*\{?\s*\\circ\s*\}?|°/g, '')
  s = s.replace(/\\?%/g, '')
  s = s.replace(/\\\$/g, '')
  s = s.replace(
    /\\(?:text|textbf|mbox|mathrm)\{\s*(?:units?|cm|m|km|mm|kg|g|s|sec|seconds?|minutes?|hours?|days?|degrees?|dollars?|cents?|inches|inch|feet|foot|ft|miles?|meters?|square [a-z]+|sq [a-z]+)\s*\}(\^\{?\d\}?)?\s*$/i,
    ''
  )
  // any unit word after a plain number (`100 \text{ mph}`)
  s = s.replace(
    /^([+-]?[\d.,{}]*\d[\d.,{}]*)\s*\\(?:text|textbf|mbox|mathrm)\{\s*[a-zA-Z][a-zA-Z ]*\}(\^\{?\d\}?)?\s*$/,
    '$1'
  )
  s = s.replace(/^\\(?:text|textbf|mbox|mathrm)\{([^{}]*)\}$/, '$1')
  s = s.replace(/\s+/g, ' ').trim()
  s = s.replace(/[.。]\s*$/, '').trim()
  s = s.replace(/^[a-zA-Z](?:_\{?\w+\}?)?\s*\\in\s*/, '')
  // the empty set; a set of one element is that element
  if (/^\\\{\s*\\\}$/.test(s)) s = '\\emptyset'
  const single = /^\\\{([^,]*)\\\}$/.exec(s)
  if (single !== null && !single[1].includes('\\{')) s = single[1].trim()
  s = s.replace(/(\d)\{,\}(?=\d{3})/g, '$1')
  if (/^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s)) s = s.replace(/,/g, '')
  return s
}

/** A plain number: integer, decimal (leading zeros allowed), `a/b`, `\frac{a}{b}`, signs. */
export function parseSimpleNumber(s: string): number | undefined {
  const t = s.replace(/\s+/g, '')
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return Number(t)
  let m = /^([+-]?)(\d+)\/(\d+)$/.exec(t)
  if (m) return ((m[1] === '-' ? -1 : 1) * Number(m[2])) / Number(m[3])
  m = /^([+-]?)\\frac\{([+-]?\d+(?:\.\d+)?)\}\{([+-]?\d+(?:\.\d+)?)\}$/.exec(t) ?? /^([+-]?)\\frac(\d)(\d)$/.exec(t)
  if (m) return ((m[1] === '-' ? -1 : 1) * Number(m[2])) / Number(m[3])
  return undefined
}

/** The letter of a multiple-choice answer (`B`, `(B)`, `B)`, `\text{(B)}`, `B. 42`), or undefined. */
export function choiceLetter(s: string): string | undefined {
  const t = s.replace(/\\(?:text|textbf|mathrm)\{([^{}]*)\}/g, '$1').trim()
  const m = /^\(?([A-E])\)?(?:$|[.:)]|\s)/.exec(t)
  return m ? m[1] : undefined
}

/** Text for a case-insensitive comparison of word answers (`\text{Monday}` = `monday`). */
export function plainText(s: string): string {
  return s
    .replace(/\\(?:text|textbf|mathrm|mbox)\{([^{}]*)\}/g, '$1')
    .replace(/\s+/g, '')
    .toLowerCase()
}

/**
 * The elements of an unordered answer list: `3, 5`, `x = 3, 5` already normalised, or a set
 * `\{3, 5\}`; undefined for one value and for ordered forms (tuples, intervals in brackets).
 */
export function unorderedItems(s: string): string[] | undefined {
  let t = s.trim()
  const set = /^\\\{([\s\S]*)\\\}$/.exec(t)
  if (set) t = set[1]
  else if (/^[([]/.test(t) && /[)\]]$/.test(t)) return undefined
  const items: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < t.length; i++) {
    const c = t[i]
    if (c === '\\') {
      i++
      continue
    }
    if ('([{'.includes(c)) depth++
    else if (')]}'.includes(c)) depth--
    else if (c === ',' && depth === 0) {
      items.push(t.slice(start, i).trim())
      start = i + 1
    }
  }
  items.push(t.slice(start).trim())
  return items.length >= 2 && items.every((x) => x.length > 0) ? items : undefined
}
