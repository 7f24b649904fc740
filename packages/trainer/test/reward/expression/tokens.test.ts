import { test } from 'node:test'
import assert from 'node:assert/strict'
import { tokenize } from '../../../src/reward/expression/tokens.ts'

test('numbers: decimals, exponents, repeating decimals', () => {
  assert.deepEqual(tokenize('1.5e3'), [{ kind: 'number', text: '1.5e3', value: 1500 }])
  assert.deepEqual(tokenize('.5'), [{ kind: 'number', text: '.5', value: 0.5 }])
  assert.equal((tokenize('0.1\\overline{6}')[0] as { value: number }).value, 1 / 6)
  assert.equal((tokenize('0.\\overline{3}')[0] as { value: number }).value, 1 / 3)
  assert.deepEqual(
    tokenize('2e^{x}').map((t) => t.text),
    ['2', 'e', '^', '{', 'x', '}'],
    'e before a non-digit is the constant'
  )
})

test('letters one by one, commands, plain words, spacing dropped', () => {
  assert.deepEqual(tokenize('ab'), [
    { kind: 'letter', text: 'a' },
    { kind: 'letter', text: 'b' }
  ])
  assert.deepEqual(tokenize('\\left( \\frac12 \\right)'), [
    { kind: 'symbol', text: '(' },
    { kind: 'command', text: 'frac' },
    { kind: 'number', text: '12', value: 12 },
    { kind: 'symbol', text: ')' }
  ])
  assert.deepEqual(
    tokenize('sqrt(2)').map((t) => t.kind),
    ['command', 'symbol', 'number', 'symbol']
  )
  assert.deepEqual(
    tokenize('2**3').map((t) => t.text),
    ['2', '^', '3']
  )
  assert.deepEqual(tokenize('1\\,000\\;x\\ y'), [
    { kind: 'number', text: '1', value: 1 },
    { kind: 'number', text: '000', value: 0 },
    { kind: 'letter', text: 'x' },
    { kind: 'letter', text: 'y' }
  ])
  assert.deepEqual(tokenize('\\{1\\} \\\\'), [
    { kind: 'command', text: '{' },
    { kind: 'number', text: '1', value: 1 },
    { kind: 'command', text: '}' },
    { kind: 'command', text: '\\' }
  ])
  assert.deepEqual(
    tokenize('2×π−1').map((t) => t.text),
    ['2', 'times', 'pi', '-', '1']
  )
})
