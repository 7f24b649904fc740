/**
 * The tokens of a LaTeX or plain-text math answer: numbers (decimals, `1.5e3`, repeating
 * decimals `0.\overline{3}`), single letters, commands (`\frac`, `\{`, `\\`), and symbols. Spacing
 * and sizing commands are dropped; a few Unicode signs read as their LaTeX command; the plain
 * words of a calculator (`sqrt`, `sin`, `pi`, …) read as commands.
 */

/** One token of an answer. */
export type Token =
  /** A number as written (`text`, digits and point) and its value. */
  | { kind: 'number'; text: string; value: number }
  /** One ASCII letter: a variable, or the constants `e` and `i`. */
  | { kind: 'letter'; text: string }
  /** A command without its backslash: `frac`, `pi`; `{`, `}`, `|` for `\{`, `\}`, `\|`; `\\` for a row break. */
  | { kind: 'command'; text: string }
  /** Any other character: `+`, `(`, `^`, `&`, …; `**` is `^`. */
  | { kind: 'symbol'; text: string }

const UNICODE: Readonly<Record<string, string>> = {
  '−': '-',
  '–': '-',
  '×': '\\times ',
  '·': '\\cdot ',
  '÷': '\\div ',
  π: '\\pi ',
  '∞': '\\infty ',
  '√': '\\sqrt '
}

/** Words of plain-text math that stand for a command (`sqrt(2)`, `2pi`, `sin(x)`). */
const PLAIN_WORDS = new Set([
  'sqrt',
  'sin',
  'cos',
  'tan',
  'sec',
  'csc',
  'cot',
  'arcsin',
  'arccos',
  'arctan',
  'sinh',
  'cosh',
  'tanh',
  'ln',
  'log',
  'exp',
  'abs',
  'pi'
])

/** Commands that change spacing or size only. */
const IGNORED = new Set([
  'left',
  'right',
  'big',
  'Big',
  'bigg',
  'Bigg',
  'bigl',
  'bigr',
  'Bigl',
  'Bigr',
  'biggl',
  'biggr',
  'displaystyle',
  'textstyle',
  'quad',
  'qquad'
])

/** The value of a repeating decimal: `whole` (`0.1`) followed by `repeat` (`6`) forever. */
function repeatingValue(whole: string, repeat: string): number {
  const [int, frac = ''] = whole.split('.')
  return (
    Number(int === '' ? '0' : int) +
    (Number(frac === '' ? '0' : frac) + Number(repeat) / (10 ** repeat.length - 1)) / 10 ** frac.length
  )
}

/** The tokens of `source`. */
export function tokenize(source: string): Token[] {
  const s = source.replace(/[−–×·÷π∞√]/g, (c) => UNICODE[c] ?? c)
  const tokens: Token[] = []
  let i = 0
  while (i < s.length) {
    const rest = s.slice(i)
    const c = s[i]
    if (/\s/.test(c)) {
      i++
      continue
    }
    const num = /^(?:\d+(?:\.\d*)?|\.\d+)/.exec(rest)
    if (num !== null) {
      let text = num[0]
      let value = Number(text)
      const repeat = text.includes('.') ? /^\\(?:overline|bar)\s*\{\s*(\d+)\s*\}/.exec(s.slice(i + text.length)) : null
      const sci = repeat === null ? /^[eE][+-]?\d+/.exec(s.slice(i + text.length)) : null
      if (repeat !== null) {
        value = repeatingValue(text, repeat[1])
        i += repeat[0].length
      } else if (sci !== null) {
        text += sci[0]
        value = Number(text)
      }
      tokens.push({ kind: 'number', text, value })
      i += text.length
      continue
    }
    const word = /^[a-zA-Z]+/.exec(rest)
    if (word !== null) {
      if (PLAIN_WORDS.has(word[0])) tokens.push({ kind: 'command', text: word[0] })
      else for (const letter of word[0]) tokens.push({ kind: 'letter', text: letter })
      i += word[0].length
      continue
    }
    if (c === '\\') {
      const name = /^\\([a-zA-Z]+)/.exec(rest)
      if (name !== null) {
        i += name[0].length
        if (IGNORED.has(name[1])) {
          if (name[1] === 'left' || name[1] === 'right') i += /^\s*\./.exec(s.slice(i))?.[0].length ?? 0 // `\left.`: no bracket
          continue
        }
        tokens.push({ kind: 'command', text: name[1] })
        continue
      }
      const next = s[i + 1] ?? ''
      i += 2
      if (next === '' || /[\s,;:!]/.test(next)) continue // spacing: `\,` `\;` `\ `
      tokens.push({ kind: 'command', text: next })
      continue
    }
    if (c === '*' && s[i + 1] === '*') {
      tokens.push({ kind: 'symbol', text: '^' })
      i += 2
      continue
    }
    tokens.push({ kind: 'symbol', text: c })
    i++
  }
  return tokens
}
