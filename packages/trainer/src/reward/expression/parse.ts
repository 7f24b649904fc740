/**
 * A recursive-descent parser of math answers, LaTeX or plain text, into a {@link MathNode}
 * tree. It reads numbers, `+ - * / ^ **`, `\cdot \times \div`, implicit multiplication (`2x`,
 * `x(x+1)`; tighter than `/`, so `1/2x` is 1/(2x)), mixed numbers (`3\frac{1}{2}`), `\frac` (and
 * `\dfrac`, `\tfrac`), `\sqrt` and `\sqrt[n]`, `\binom`, `n!`, `|x|`, floors and ceilings, the
 * functions of {@link FunctionName} (`\sin^2 x`, `\sin^{-1} x`, `\log_b x`; an argument without
 * parentheses runs over the factors up to the next function: `\sin 2x \cos x` is
 * sin(2x)·cos(x)), `\sum` and `\prod`, the constants `\pi`, `e`, `i`, `\infty`, variables
 * (letters, Greek letters, subscripts), tuples and intervals, sets, unions, matrices, the empty
 * set and `\mathbb{R}`. As in LaTeX, a command's argument without braces is one token (`\frac12`
 * is ½); an exponent or a subscript without braces is one token too, but a whole number (`2^10`
 * is 1024, `x_10` is x₁₀). Anything else is no parse.
 */
import { complex, I } from './complex.ts'
import { tokenize, type Token } from './tokens.ts'
import type { FunctionName, MathNode } from './tree.ts'

/** Thrown inside the parser for input it does not read; {@link parseMath} turns it into `undefined`. */
class ParseError extends Error {}

const GREEK = new Set([
  'alpha',
  'beta',
  'gamma',
  'delta',
  'epsilon',
  'varepsilon',
  'zeta',
  'eta',
  'theta',
  'vartheta',
  'iota',
  'kappa',
  'lambda',
  'mu',
  'nu',
  'xi',
  'rho',
  'varrho',
  'sigma',
  'tau',
  'upsilon',
  'phi',
  'varphi',
  'chi',
  'psi',
  'omega',
  'Gamma',
  'Delta',
  'Theta',
  'Lambda',
  'Xi',
  'Pi',
  'Sigma',
  'Upsilon',
  'Phi',
  'Psi',
  'Omega',
  'ell'
])

/** Commands (and plain words) that name a function of one argument, or `\log`. */
const FUNCTIONS: Readonly<Record<string, FunctionName>> = {
  sin: 'sin',
  cos: 'cos',
  tan: 'tan',
  sec: 'sec',
  csc: 'csc',
  cot: 'cot',
  arcsin: 'asin',
  arccos: 'acos',
  arctan: 'atan',
  arcsec: 'asec',
  arccsc: 'acsc',
  arccot: 'acot',
  sinh: 'sinh',
  cosh: 'cosh',
  tanh: 'tanh',
  exp: 'exp',
  ln: 'ln',
  log: 'log',
  lg: 'log',
  abs: 'abs'
}

/** `\sin^{-1}` is `\arcsin`. */
const INVERSES: Partial<Record<FunctionName, FunctionName>> = {
  sin: 'asin',
  cos: 'acos',
  tan: 'atan',
  sec: 'asec',
  csc: 'acsc',
  cot: 'acot'
}

const FRACTIONS = new Set(['frac', 'dfrac', 'tfrac', 'cfrac'])
const BINOMIALS = new Set(['binom', 'dbinom', 'tbinom'])
const MATRICES = new Set(['matrix', 'pmatrix', 'bmatrix', 'Bmatrix', 'smallmatrix', 'array'])
const STYLES = new Set(['mathrm', 'mathit', 'operatorname'])

/** Commands that begin a factor: `2\pi`, `3\sqrt{2}`, `x\sin x` multiply. */
const FACTOR_COMMANDS = new Set([
  'pi',
  'infty',
  'imath',
  'sqrt',
  'sum',
  'prod',
  'lfloor',
  'lceil',
  'lvert',
  'mathbb',
  'begin',
  ...GREEK,
  ...Object.keys(FUNCTIONS),
  ...FRACTIONS,
  ...BINOMIALS,
  ...STYLES
])

/** The tree of `source`, or undefined when it is not an expression this parser reads. */
export function parseMath(source: string): MathNode | undefined {
  try {
    return new Parser(tokenize(source)).all()
  } catch (err) {
    if (err instanceof ParseError || err instanceof RangeError) return undefined // RangeError: nested past the stack
    throw err
  }
}

const num = (re: number, im = 0): MathNode => ({ kind: 'number', value: complex(re, im) })
const binary = (op: '+' | '-' | '*' | '/' | '^', left: MathNode, right: MathNode): MathNode => ({
  kind: 'binary',
  op,
  left,
  right
})
const isInteger = (n: MathNode): boolean => n.kind === 'number' && n.literal !== undefined

class Parser {
  private at = 0
  /** Open `|…|` bars: inside one, a `|` closes it rather than starting a factor. */
  private bars = 0
  /** Indices of the enclosing `\sum`s and `\prod`s: variables even when named `e` or `i`. */
  private readonly bound = new Set<string>()

  constructor(private readonly tokens: Token[]) {}

  all(): MathNode {
    if (this.tokens.length === 0) throw new ParseError('empty')
    const node = this.list()
    if (this.at < this.tokens.length) throw new ParseError('unexpected token')
    return node
  }

  private peek(): Token | undefined {
    return this.tokens[this.at]
  }
  private isSymbol(text: string): boolean {
    const t = this.peek()
    return t?.kind === 'symbol' && t.text === text
  }
  private isCommand(text: string): boolean {
    const t = this.peek()
    return t?.kind === 'command' && t.text === text
  }
  private take(): Token {
    const t = this.tokens[this.at++]
    if (t === undefined) throw new ParseError('unexpected end')
    return t
  }

  private expectSymbol(text: string): void {
    if (!this.isSymbol(text)) throw new ParseError(`expected ${text}`)
    this.at++
  }

  private expectCommand(text: string): void {
    if (!this.isCommand(text)) throw new ParseError(`expected \\${text}`)
    this.at++
  }

  /** `a, b, c`: several answers, or one. */
  private list(): MathNode {
    const items = [this.union()]
    while (this.isSymbol(',')) {
      this.at++
      items.push(this.union())
    }
    return items.length === 1 ? items[0] : { kind: 'list', items }
  }

  private union(): MathNode {
    const items = [this.sum()]
    while (this.isCommand('cup')) {
      this.at++
      items.push(this.sum())
    }
    return items.length === 1 ? items[0] : { kind: 'union', items }
  }

  private sum(): MathNode {
    let left = this.term()
    while (this.isSymbol('+') || this.isSymbol('-')) {
      const op = this.take().text as '+' | '-'
      left = binary(op, left, this.term())
    }
    return left
  }

  /** Explicit products and quotients of implicit products, left to right. */
  private term(): MathNode {
    let left = this.product()
    for (;;) {
      const t = this.peek()
      if (
        (t?.kind === 'symbol' && t.text === '*') ||
        (t?.kind === 'command' && (t.text === 'cdot' || t.text === 'times' || t.text === 'ast'))
      ) {
        this.at++
        left = binary('*', left, this.product())
      } else if ((t?.kind === 'symbol' && t.text === '/') || (t?.kind === 'command' && t.text === 'div')) {
        this.at++
        left = binary('/', left, this.product())
      } else return left
    }
  }

  /** Factors side by side (`2x`, `x(x+1)`): they bind tighter than `/`, so `1/2x` is 1/(2x). */
  private product(): MathNode {
    let left = this.signed()
    for (let t = this.peek(); t !== undefined && this.startsFactor(t); t = this.peek())
      left = binary('*', left, this.power())
    return left
  }

  private signed(): MathNode {
    if (this.isSymbol('-')) {
      this.at++
      return { kind: 'neg', arg: this.signed() }
    }
    if (this.isSymbol('+')) {
      this.at++
      return this.signed()
    }
    return this.power()
  }

  /** `a^b^c` is `a^(b^c)`. */
  private power(): MathNode {
    const base = this.postfix()
    const exponents: MathNode[] = []
    while (this.isSymbol('^')) {
      this.at++
      exponents.push(this.superscript())
    }
    let exponent = exponents.pop()
    if (exponent === undefined) return base
    while (exponents.length > 0) exponent = binary('^', exponents.pop() as MathNode, exponent)
    return binary('^', base, exponent)
  }

  private postfix(): MathNode {
    const node = this.primary()
    if (!this.isSymbol('!')) return node
    this.at++
    if (this.isSymbol('!')) throw new ParseError('double factorial')
    return { kind: 'call', fn: 'factorial', args: [node] }
  }

  /** True when `t` begins a factor that multiplies the one before it. */
  private startsFactor(t: Token): boolean {
    if (t.kind === 'number' || t.kind === 'letter') return true
    if (t.kind === 'command')
      return FACTOR_COMMANDS.has(t.text) || ((t.text === 'vert' || t.text === '|') && this.bars === 0)
    return t.text === '(' || t.text === '[' || t.text === '{' || (t.text === '|' && this.bars === 0)
  }

  private primary(): MathNode {
    const t = this.take()
    switch (t.kind) {
      case 'number':
        return this.number(t.text, t.value)
      case 'letter':
        return this.letter(t.text)
      case 'command':
        return this.command(t.text)
      case 'symbol':
        if (t.text === '(' || t.text === '[') return this.bracketed(t.text)
        if (t.text === '{') {
          this.at--
          return this.group()
        }
        if (t.text === '|') return this.absolute('|')
        throw new ParseError(`unexpected ${t.text}`)
    }
  }

  /** A number; an integer before a fraction of integers is a mixed number (`3\frac{1}{2}` is 7/2). */
  private number(text: string, value: number): MathNode {
    const node: MathNode = { kind: 'number', value: complex(value), ...(/^\d+$/.test(text) ? { literal: text } : {}) }
    const next = this.peek()
    if (node.literal === undefined || next?.kind !== 'command' || !FRACTIONS.has(next.text)) return node
    const fraction = this.primary()
    const mixed = fraction.kind === 'binary' && isInteger(fraction.left) && isInteger(fraction.right)
    return binary(mixed ? '+' : '*', node, fraction)
  }

  private letter(text: string): MathNode {
    if (this.bound.has(text)) return { kind: 'variable', name: text }
    if (text === 'e' && !this.isSymbol('_')) return num(Math.E)
    if (text === 'i' && !this.isSymbol('_')) return { kind: 'number', value: I }
    return { kind: 'variable', name: text + this.subscript() }
  }

  /** `_1`, `_{n}` after a variable, as text of its name (`x_1`); empty when there is none. */
  private subscript(): string {
    if (!this.isSymbol('_')) return ''
    this.at++
    return '_' + (this.isSymbol('{') ? this.rawGroup() : this.take().text)
  }

  /** The text of the tokens of a `{…}` group without nested groups (`{pmatrix}`, `{R}`). */
  private rawGroup(): string {
    this.expectSymbol('{')
    let text = ''
    while (!this.isSymbol('}')) {
      const t = this.take()
      if (t.kind === 'symbol' && t.text === '{') throw new ParseError('nested group')
      text += t.text
    }
    this.at++
    return text
  }

  /** `{…}`: a group. */
  private group(): MathNode {
    this.expectSymbol('{')
    const node = this.union()
    this.expectSymbol('}')
    return node
  }

  /**
   * A command's argument: a group, a parenthesised group (plain `sqrt(2)`), or one token (`\frac12`: the digit 1, then
   * 2).
   */
  private argument(): MathNode {
    if (this.isSymbol('{')) return this.group()
    if (this.isSymbol('(')) return this.primary()
    const t = this.peek()
    if (t?.kind === 'number' && t.text.length > 1) {
      const rest = t.text.slice(1)
      if (!/^\d/.test(t.text) || !/^[\d.]+$/.test(rest)) throw new ParseError('argument')
      this.tokens[this.at] = { kind: 'number', text: rest, value: Number(rest) }
      return { kind: 'number', value: complex(Number(t.text[0])), literal: t.text[0] }
    }
    const u = this.take()
    if (u.kind === 'number') return { kind: 'number', value: complex(u.value), literal: u.text }
    if (u.kind === 'letter') return this.letter(u.text)
    if (u.kind === 'command') return this.command(u.text)
    throw new ParseError('argument')
  }

  /** An exponent: a group, a signed exponent (plain `10^-3`), a whole number, or one token. */
  private superscript(): MathNode {
    if (this.isSymbol('{')) return this.group()
    if (this.isSymbol('-')) {
      this.at++
      return { kind: 'neg', arg: this.superscript() }
    }
    if (this.isSymbol('+')) {
      this.at++
      return this.superscript()
    }
    const t = this.peek()
    if (t?.kind === 'number') {
      this.at++
      return num(t.value)
    }
    return this.argument()
  }

  private command(name: string): MathNode {
    if (name === 'pi') return num(Math.PI)
    if (name === 'infty') return num(Number.POSITIVE_INFINITY)
    if (name === 'imath') return { kind: 'number', value: I }
    if (GREEK.has(name)) return { kind: 'variable', name: name + this.subscript() }
    if (FRACTIONS.has(name)) {
      const top = this.argument()
      return binary('/', top, this.argument())
    }
    if (BINOMIALS.has(name)) {
      const n = this.argument()
      return { kind: 'call', fn: 'binom', args: [n, this.argument()] }
    }
    if (name === 'sqrt') return this.root()
    const fn = FUNCTIONS[name]
    if (fn !== undefined) return this.call(fn)
    if (name === 'sum' || name === 'prod') return this.bigOperator(name === 'sum' ? 'sum' : 'product')
    if (name === 'lfloor' || name === 'lceil') {
      const inner = this.union()
      this.expectCommand(name === 'lfloor' ? 'rfloor' : 'rceil')
      return { kind: 'call', fn: name === 'lfloor' ? 'floor' : 'ceil', args: [inner] }
    }
    if (name === 'lvert' || name === 'vert' || name === '|') return this.absolute(name === 'lvert' ? 'rvert' : name)
    if (name === '{') return this.set()
    if (name === 'emptyset' || name === 'varnothing') return { kind: 'empty' }
    if (name === 'mathbb') {
      if (this.rawGroup() !== 'R') throw new ParseError('a set other than the reals')
      return {
        kind: 'tuple',
        open: '(',
        close: ')',
        items: [num(Number.NEGATIVE_INFINITY), num(Number.POSITIVE_INFINITY)]
      }
    }
    if (STYLES.has(name)) {
      const word = this.rawGroup()
      if (word === 'e' || word === 'i') return this.letter(word)
      const styled = FUNCTIONS[word]
      if (styled !== undefined) return this.call(styled)
      if (!/^[a-zA-Z]+$/.test(word)) throw new ParseError('styled text')
      return { kind: 'variable', name: word + this.subscript() }
    }
    if (name === 'begin') return this.matrix()
    throw new ParseError(`unknown command \\${name}`)
  }

  /** `\sqrt{x}` and `\sqrt[n]{x}`. */
  private root(): MathNode {
    if (!this.isSymbol('[')) return { kind: 'call', fn: 'sqrt', args: [this.argument()] }
    this.at++
    const index = this.sum()
    this.expectSymbol(']')
    return { kind: 'call', fn: 'root', args: [this.argument(), index] }
  }

  /** A function after its name: `\log_b`, a power (`\sin^2 x`; `^{-1}` is the inverse), then its argument. */
  private call(named: FunctionName): MathNode {
    let fn = named
    let base: MathNode | undefined
    let exponent: MathNode | undefined
    if (fn === 'log' && this.isSymbol('_')) {
      this.at++
      base = this.argument()
    }
    if (this.isSymbol('^')) {
      this.at++
      exponent = this.superscript()
      const inverse = INVERSES[fn]
      if (
        inverse !== undefined &&
        exponent.kind === 'neg' &&
        exponent.arg.kind === 'number' &&
        exponent.arg.value.re === 1 &&
        exponent.arg.value.im === 0
      ) {
        fn = inverse
        exponent = undefined
      }
    }
    const arg = this.isSymbol('(') ? this.primary() : this.functionArgument()
    const node: MathNode = { kind: 'call', fn, args: fn === 'log' ? [base ?? num(10), arg] : [arg] }
    return exponent === undefined ? node : binary('^', node, exponent)
  }

  /** The argument of a function written without parentheses: its factors up to an operator or the next function. */
  private functionArgument(): MathNode {
    if (this.isSymbol('-')) {
      this.at++
      return { kind: 'neg', arg: this.functionArgument() }
    }
    let node = this.power()
    for (
      let t = this.peek();
      t !== undefined &&
      this.startsFactor(t) &&
      !(t.kind === 'command' && (FUNCTIONS[t.text] !== undefined || t.text === 'sum' || t.text === 'prod'));
      t = this.peek()
    ) {
      node = binary('*', node, this.power())
    }
    return node
  }

  /** `\sum_{n=1}^{N} body` (or `\prod`): the body is the product that follows. */
  private bigOperator(kind: 'sum' | 'product'): MathNode {
    this.expectSymbol('_')
    this.expectSymbol('{')
    const t = this.take()
    if (t.kind !== 'letter' && !(t.kind === 'command' && GREEK.has(t.text))) throw new ParseError('index')
    const index = t.text + this.subscript()
    this.expectSymbol('=')
    const from = this.sum()
    this.expectSymbol('}')
    this.expectSymbol('^')
    const to = this.superscript()
    const outer = this.bound.has(index)
    this.bound.add(index)
    const body = this.term()
    if (!outer) this.bound.delete(index)
    return { kind, index, from, to, body }
  }

  /** `(a, b)`, `[a, b)`: a tuple or an interval; with one item and matching brackets, a group. */
  private bracketed(open: '(' | '['): MathNode {
    const items = [this.union()]
    while (this.isSymbol(',')) {
      this.at++
      items.push(this.union())
    }
    const close = this.take()
    if (close.kind !== 'symbol' || (close.text !== ')' && close.text !== ']')) throw new ParseError('unclosed bracket')
    if (items.length > 1) return { kind: 'tuple', open, close: close.text, items }
    if ((open === '(') !== (close.text === ')')) throw new ParseError('mismatched brackets')
    return items[0]
  }

  /** `|x|` (also `\lvert x \rvert`, `\vert x \vert`): the absolute value. */
  private absolute(close: string): MathNode {
    this.bars++
    const inner = this.sum()
    this.bars--
    const t = this.take()
    if (t.text !== close || (t.kind !== 'symbol' && t.kind !== 'command')) throw new ParseError('unclosed bars')
    return { kind: 'call', fn: 'abs', args: [inner] }
  }

  /** `\{a, b\}` after its `\{`. */
  private set(): MathNode {
    const items: MathNode[] = []
    if (!this.isCommand('}')) {
      items.push(this.union())
      while (this.isSymbol(',')) {
        this.at++
        items.push(this.union())
      }
    }
    this.expectCommand('}')
    return items.length === 0 ? { kind: 'empty' } : { kind: 'set', items }
  }

  /** `\begin{pmatrix} a & b \\ c & d \end{pmatrix}` after its `\begin` (also `bmatrix`, `matrix`, `array`, …). */
  private matrix(): MathNode {
    const env = this.rawGroup()
    if (!MATRICES.has(env)) throw new ParseError(`environment ${env}`)
    if (env === 'array') this.rawGroup() // the column specification
    const rows: MathNode[][] = [[]]
    for (;;) {
      if (this.isCommand('end')) {
        this.at++
        if (this.rawGroup() !== env) throw new ParseError('mismatched \\end')
        break
      }
      rows[rows.length - 1].push(this.union())
      if (this.isSymbol('&')) {
        this.at++
        continue
      }
      if (this.isCommand('\\')) {
        this.at++
        if (!this.isCommand('end')) rows.push([])
        continue
      }
      if (!this.isCommand('end')) throw new ParseError('matrix cell')
    }
    if (rows.some((r) => r.length !== rows[0].length)) throw new ParseError('ragged matrix')
    return { kind: 'matrix', rows }
  }
}
