import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { arithmeticModel, arithmeticOf, parseDatasetLine, type ScriptContext } from '@sandfleet/trainer'

const EXAMPLE = new URL('../../examples/arithmetic.jsonl', import.meta.url)

test('the scripted model reads the arithmetic of a problem', () => {
  assert.equal(arithmeticOf('What is 17 * 23?'), '17 * 23')
  assert.equal(arithmeticOf('Compute (128 - 37) * 4.'), '(128 - 37) * 4')
  assert.equal(arithmeticOf('What is 12 squared?'), '12 ** 2')
  assert.equal(arithmeticOf('What is 9 cubed?'), '9 ** 3')
  assert.equal(arithmeticOf('What is 2^10 + 1?'), '2**10 + 1')
  assert.equal(arithmeticOf('Name the capital of France.'), undefined)
})

test('the scripted model calls the tool in the format asked, then answers from its output', async () => {
  const ctx = (prompt: string, stop: string[], seed = 2): ScriptContext => ({
    prompt,
    body: { stop, seed },
    call: 0,
    turn: 0,
    route: 'completions'
  })
  const problem = '<|im_start|>user\nWhat is 6 * 7?<|im_end|>\n<|im_start|>assistant\n'
  assert.match(
    String(await arithmeticModel(ctx(problem, ['</tool_call>']))),
    /<tool_call>\n\{"name":"python","arguments":\{"code":"print\(6 \* 7\)"/
  )
  assert.match(
    String(await arithmeticModel(ctx(problem, ['```output']))),
    /```python\nprint\(6 \* 7\)\n```\n```output$/
  )
  const answered = `${problem}<tool_call>{}</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n<|im_start|>assistant\n`
  assert.match(String(await arithmeticModel(ctx(answered, ['</tool_call>']))), /<answer>\\boxed\{42\}<\/answer>$/)
  assert.match(
    String(await arithmeticModel(ctx(answered, ['</tool_call>'], 4))),
    /\\boxed\{43\}/,
    'seed ≡ 0 (mod 4): one off'
  )
})

test("the example dataset's every line is one of the formats a dataset takes", () => {
  const lines = readFileSync(EXAMPLE, 'utf8').trim().split('\n')
  assert.equal(lines.length, 8)
  const items = lines.map((l, i) => parseDatasetLine(l, i + 1))
  assert.ok(items.every((item) => item.messages.length > 0 && item.reference !== null))
})
