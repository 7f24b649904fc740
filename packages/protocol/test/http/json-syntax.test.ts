import { test } from 'node:test'
import assert from 'node:assert/strict'
import { jsonSyntaxError } from '../../src/http/json-syntax.ts'

test('a body that is not JSON is placed: line, column and what was expected there', () => {
  const cases: Array<[string, string]> = [
    ['{"code": "print(1)",}', 'line 1, column 21: "}" where a property name in double quotes was expected'],
    ['{"code": "print(1)"', "line 1, column 20: the end of the body where ',' or '}' was expected"],
    ['not json', 'line 1, column 1: "n" where a value was expected'],
    ['{\n  "code": "x"\n  "timeout_ms": 5\n}', `line 3, column 3: "\\"" where ',' or '}' was expected`],
    ["{'code': 1}", `line 1, column 2: "'" where a property name in double quotes was expected`],
    ['{"code" "x"}', `line 1, column 9: "\\"" where ':' was expected after a property name`],
    ['[1, 2,]', 'line 1, column 7: "]" where a value was expected'],
    ['{"a": 1} x', 'line 1, column 10: "x" after the end of the JSON value'],
    ['{"a": "tab\there"}', 'line 1, column 11: a control character in a string (escape it: \\n, \\t, \\u00XX)'],
    ['{"a": "\\q"}', 'line 1, column 8: an unknown escape \\q'],
    ['{"a": 01}', `line 1, column 8: "1" where ',' or '}' was expected`],
    ['{"a": "open', 'line 1, column 12: a string not closed with "'],
    ['', 'line 1, column 1: the end of the body where a value was expected']
  ]
  for (const [body, where] of cases) {
    assert.throws(() => JSON.parse(body), SyntaxError, `${JSON.stringify(body)} is not JSON`)
    assert.equal(jsonSyntaxError(body), where, JSON.stringify(body))
  }
})

test('valid JSON has nothing to place; a body nested a million deep is scanned, not recursed into', () => {
  for (const body of ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"], "b": {"c": {}}} ', '"x"', '0'])
    assert.equal(jsonSyntaxError(body), undefined, body)
  const deep = '['.repeat(1_000_000)
  assert.equal(jsonSyntaxError(deep), 'line 1, column 1000001: the end of the body where a value was expected')
  assert.equal(jsonSyntaxError(deep + ']'.repeat(1_000_000)), undefined)
})
