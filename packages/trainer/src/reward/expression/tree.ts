/**
 * The expression tree a parsed answer becomes: numbers and variables, operators, functions,
 * sums and products over an index, and the structured answers (tuples and intervals, unordered
 * lists, sets, unions, matrices, the empty set).
 */
import type { Complex } from './complex.ts'

/** The functions an answer may call (`\sin`, `\log_b`, `\sqrt[n]`, `n!`, `\binom{n}{k}`, …). */
export type FunctionName =
  | 'sin'
  | 'cos'
  | 'tan'
  | 'sec'
  | 'csc'
  | 'cot'
  | 'asin'
  | 'acos'
  | 'atan'
  | 'asec'
  | 'acsc'
  | 'acot'
  | 'sinh'
  | 'cosh'
  | 'tanh'
  | 'exp'
  | 'ln'
  | 'log'
  | 'sqrt'
  | 'root'
  | 'abs'
  | 'floor'
  | 'ceil'
  | 'factorial'
  | 'binom'

/** One node of a parsed answer. */
export type MathNode =
  /** A number or a constant (π, e, i, ∞); `literal` is the integer's digits when it was written as one. */
  | { kind: 'number'; value: Complex; literal?: string }
  /** A free variable: `x`, `a_1`, `theta`. */
  | { kind: 'variable'; name: string }
  | { kind: 'neg'; arg: MathNode }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '^'; left: MathNode; right: MathNode }
  /**
   * A function applied to its arguments (`log`: base then argument; `root`: radicand then index; `binom`: n then k).
   */
  | { kind: 'call'; fn: FunctionName; args: MathNode[] }
  /** `\sum` or `\prod` of `body` for `index` from `from` to `to`. */
  | { kind: 'sum' | 'product'; index: string; from: MathNode; to: MathNode; body: MathNode }
  /**
   * A bracketed sequence: a tuple `(1, 2)` or an interval `(0, 1]`, told apart by nobody: both compare by brackets and
   * items.
   */
  | { kind: 'tuple'; open: '(' | '['; close: ')' | ']'; items: MathNode[] }
  /** Answers side by side (`3, 5`), a set `\{3, 5\}`, a union `A \cup B`: unordered. */
  | { kind: 'list' | 'set' | 'union'; items: MathNode[] }
  /** A matrix or vector, by rows (the bracket style does not count). */
  | { kind: 'matrix'; rows: MathNode[][] }
  /** The empty set. */
  | { kind: 'empty' }

/** The names of the free variables of `node`, sorted (an index of `\sum` is bound in its body). */
export function freeVariables(node: MathNode): string[] {
  const names = new Set<string>()
  const visit = (n: MathNode, bound: ReadonlySet<string>): void => {
    switch (n.kind) {
      case 'number':
      case 'empty':
        return
      case 'variable':
        if (!bound.has(n.name)) names.add(n.name)
        return
      case 'neg':
        visit(n.arg, bound)
        return
      case 'binary':
        visit(n.left, bound)
        visit(n.right, bound)
        return
      case 'call':
        for (const a of n.args) visit(a, bound)
        return
      case 'sum':
      case 'product':
        visit(n.from, bound)
        visit(n.to, bound)
        visit(n.body, new Set([...bound, n.index]))
        return
      case 'tuple':
      case 'list':
      case 'set':
      case 'union':
        for (const a of n.items) visit(a, bound)
        return
      case 'matrix':
        for (const row of n.rows) for (const a of row) visit(a, bound)
    }
  }
  visit(node, new Set())
  return [...names].sort()
}
