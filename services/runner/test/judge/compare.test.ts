import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ResolvedCompare } from '@sandfleet/protocol'
import { meetsExpected, sameJson, sameText } from '../../src/judge/compare.ts'

const lines: ResolvedCompare = { kind: 'lines' }
const exact: ResolvedCompare = { kind: 'exact' }
const tokens: ResolvedCompare = { kind: 'tokens' }
const float = (tolerance: number): ResolvedCompare => ({ kind: 'float', tolerance })

test('lines: trailing whitespace of each line and trailing blank lines ignored, CRLF = LF; nothing else', () => {
  assert.ok(sameText(lines, '1 2\r\n3  \n\n\n', '1 2\n3'))
  assert.ok(sameText(lines, '3\t\n', '3\n'))
  assert.ok(sameText(lines, '', '\n\n'))
  assert.ok(!sameText(lines, ' 3\n', '3\n'), 'leading whitespace counts')
  assert.ok(!sameText(lines, '1 2\n', '1  2\n'), 'whitespace inside a line counts')
  assert.ok(!sameText(lines, '1\n\n2\n', '1\n2\n'), 'a blank line inside counts')
  assert.ok(!sameText(lines, '3\n4\n', '3\n'), 'a line more')
  assert.ok(!sameText(lines, '3', '4'))
})

test('exact: byte for byte', () => {
  assert.ok(sameText(exact, 'a\n', 'a\n'))
  assert.ok(!sameText(exact, 'a', 'a\n'))
  assert.ok(!sameText(exact, 'a\r\n', 'a\n'))
})

test('tokens: any whitespace between the same tokens', () => {
  assert.ok(sameText(tokens, '1\n2   3\t\n', ' 1 2\n3'))
  assert.ok(!sameText(tokens, '1 2', '1 2 3'))
  assert.ok(!sameText(tokens, '1.0', '1'), 'tokens compare as text')
})

test('float: numbers within the absolute or relative tolerance, other tokens exactly', () => {
  const f = float(1e-6)
  assert.ok(sameText(f, '0.3333333 YES\n', '0.33333333 YES'))
  assert.ok(sameText(f, '1000000.5', '1000000.0'), 'relative: 0.5 in 1e6 is 5e-7')
  assert.ok(sameText(f, '1e3', '1000.0000001'))
  assert.ok(!sameText(f, '0.334', '0.333'))
  assert.ok(!sameText(f, '0.3333333 NO', '0.3333333 YES'))
  assert.ok(!sameText(f, 'abc', '1.0'), 'a word where a number is expected')
  assert.ok(!sameText(f, '1.0', 'abc'))
  assert.ok(!sameText(f, '1 2', '1'))
  assert.ok(sameText(f, 'nan inf -inf', 'NaN Inf -Infinity'))
  assert.ok(!sameText(f, 'inf', '1e308'))
  assert.ok(sameText(float(0), '2.50', '2.5'), 'zero tolerance still reads numbers')
})

test('JSON: deep equality, objects in any key order, numbers within a tolerance only when given', () => {
  assert.ok(sameJson([0, 1], [0, 1], undefined))
  assert.ok(sameJson({ a: [1, { b: null }], c: 'x' }, { c: 'x', a: [1, { b: null }] }, undefined))
  assert.ok(!sameJson([0, 1], [1, 0], undefined))
  assert.ok(!sameJson({ a: 1 }, { a: 1, b: 2 }, undefined))
  assert.ok(!sameJson([1], { 0: 1 }, undefined))
  assert.ok(!sameJson(null, 0, undefined))
  assert.ok(!sameJson('1', 1, undefined))
  assert.ok(!sameJson(0.1 + 0.2, 0.3, undefined))
  assert.ok(sameJson([0.1 + 0.2], [0.3], 1e-9))
  assert.ok(!sameJson(undefined, null, undefined), 'no value is not null')
})

test("meetsExpected: text by compare, a call's value as JSON, and APPS's second value", () => {
  assert.ok(meetsExpected(lines, { text: '3\n' }, { stdout: '3' }))
  assert.ok(!meetsExpected(lines, { text: '3\n' }, { stdout: '4' }))
  assert.ok(meetsExpected(lines, { json: [0, 1] }, { stdout: 'debug print', returned: [0, 1] }))
  assert.ok(!meetsExpected(lines, { json: [0, 1] }, { stdout: '[0, 1]', returned: undefined }))
  assert.ok(meetsExpected(float(1e-3), { json: 0.5 }, { stdout: '', returned: 0.5004 }))
  assert.ok(meetsExpected(lines, { json: [[0, 1]], or: [0, 1] }, { stdout: '', returned: [0, 1] }))
  assert.ok(meetsExpected(lines, { json: [[0, 1]], or: [0, 1] }, { stdout: '', returned: [[0, 1]] }))
  assert.ok(!meetsExpected(lines, { json: [[0, 1]], or: [0, 1] }, { stdout: '', returned: [1, 0] }))
})
