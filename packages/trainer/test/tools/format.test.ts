import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ExecResult } from '@sandfleet/protocol'
import { formatToolResult, TRUNCATE_SIDES, truncate } from '@sandfleet/trainer'

const base: ExecResult = {
  status: 'ok',
  stdout: '42\n',
  stderr: '',
  exit_code: 0,
  duration_ms: 1,
  queue_ms: 0,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {},
  runner: 'r',
  sandbox: 's'
}

test('styles wrap the result text', () => {
  assert.equal(formatToolResult(base, 'rstar2'), '<tool_response>\n42\n\n</tool_response>')
  assert.equal(formatToolResult(base, 'output-fence'), '\n```output\n42\n\n```\n')
  assert.equal(formatToolResult(base, 'verl'), '42\n')
  assert.equal(
    formatToolResult({ parseError: 'bad JSON' }, 'rstar2'),
    '<tool_response>\nError: bad JSON\n</tool_response>'
  )
})

test('status decides the text: timeout and user errors are named, fleet faults are not blamed on the code', () => {
  assert.match(formatToolResult({ ...base, status: 'timeout', stdout: '' }, 'verl'), /TimeoutError/)
  assert.match(
    formatToolResult(
      { ...base, status: 'error', stdout: '', error: { type: 'ZeroDivisionError', message: 'division by zero' } },
      'verl'
    ),
    /ZeroDivisionError: division by zero/
  )
  assert.match(
    formatToolResult(
      { ...base, status: 'infra_error', stdout: '', error: { type: 'SF_ERR_X', message: 'runner lost' } },
      'verl'
    ),
    /unavailable \(infra_error\)/
  )
})

test('truncation sides are named as verl names them: left keeps the start, right keeps the end, middle both ends', () => {
  const text = 'abcdefghij'
  assert.equal(truncate(text, { maxChars: 4, side: 'left', marker: '[{n}]' }), 'abcd[6]')
  assert.equal(truncate(text, { maxChars: 4, side: 'right', marker: '[{n}]' }), '[6]ghij')
  assert.equal(truncate(text, { maxChars: 4, side: 'middle', marker: '[{n}]' }), 'ab[6]ij')
  assert.equal(truncate(text, { maxChars: 10, side: 'middle' }), text)
  assert.deepEqual(TRUNCATE_SIDES, ['left', 'middle', 'right'])
})
