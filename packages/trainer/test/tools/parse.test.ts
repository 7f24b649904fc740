import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseToolCalls } from '@sandfleet/trainer'

test('hermes tool calls parse code and input, as rStar2-Agent writes them', () => {
  const text =
    'Let me compute.\n<tool_call>\n{"name": "python_code_with_standard_io", "arguments": {"code": "print(int(input())*2)", "input": "21"}}\n</tool_call>'
  const [call] = parseToolCalls(text, 'hermes')
  assert.ok(call.ok)
  assert.equal(call.code, 'print(int(input())*2)')
  assert.equal(call.stdin, '21')
  assert.equal(call.name, 'python_code_with_standard_io')
})

test('malformed hermes calls come back with a reason, not an exception', () => {
  const cases: Array<[string, RegExp]> = [
    ['<tool_call>{"name": "python", "arguments": {"code": "print(1)"</tool_call>', /not valid JSON/],
    ['<tool_call>{"name": "python", "arguments": {}}</tool_call>', /arguments\.code/],
    ['<tool_call>{"arguments": {"code": "1"}}</tool_call>', /"name"/],
    ['<tool_call>{"name": "python", "arguments": {"code": "1"}}', /not closed/]
  ]
  for (const [text, reason] of cases) {
    const [call] = parseToolCalls(text, 'hermes')
    assert.equal(call.ok, false, text)
    if (!call.ok) assert.match(call.reason, reason)
  }
})

test('markdown python fences and <code> tags parse; several calls keep their order', () => {
  const md = parseToolCalls('a\n```python\nx = 1\n```\nb\n```python\nprint(x)\n```\n```output', 'markdown')
  assert.deepEqual(
    md.map((c) => c.ok && c.code),
    ['x = 1\n', 'print(x)\n']
  )
  const code = parseToolCalls('<code>\n```python\nprint(2)\n```\n</code>', 'code')
  assert.ok(code[0].ok && code[0].code.includes('print(2)'))
  assert.equal(parseToolCalls('```python\nprint(1)', 'markdown')[0].ok, false)
  assert.deepEqual(parseToolCalls('no calls here', 'hermes'), [])
})
