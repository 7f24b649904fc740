/**
 * The code reward: the last fenced program of a response, in the problem's language, judged against its tests; 1 when
 * every test passes, tests passed over total with `partial`; the fleet's verdicts and a refused judge score nothing
 * (`fleetFault`, `unscored`), and a response with no program scores 0.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { failedJudgeResult, type JudgeRequest, type JudgeResult } from '@sandfleet/protocol'
import { codeReward, extractCode, type Judge } from '@sandfleet/trainer'

/** A judge that answers `verdict` with `passed` of the request's tests, and keeps what it was asked. */
function scripted(verdict: JudgeResult['verdict'], passed = 0): Judge & { asked: JudgeRequest[] } {
  const asked: JudgeRequest[] = []
  return {
    asked,
    async judge(request) {
      asked.push(request)
      const total = request.tests?.length ?? request.input_output?.inputs.length ?? 0
      if (
        verdict === 'overloaded' ||
        verdict === 'queue_timeout' ||
        verdict === 'infra_error' ||
        verdict === 'invalid_request'
      )
        return failedJudgeResult(verdict, request.language ?? 'python', 'SF_ERR_X', 'why')
      return { ...failedJudgeResult(verdict, 'python', '', ''), error: undefined, passed, total } as JudgeResult
    }
  }
}

const tests = {
  input_output: { inputs: ['1 2\n', '3 4\n', '5 6\n', '7 8\n'], outputs: ['3\n', '7\n', '11\n', '15\n'] }
}

test('extractCode takes the last fenced block in the language, else the last untagged one', () => {
  const response = 'Plan:\n```python\nprint(1)\n```\nBetter:\n```py\nprint(2)\n```\nand a note\n```text\nnot code\n```'
  assert.equal(extractCode(response), 'print(2)\n')
  assert.equal(extractCode('```cpp\nint main(){}\n```\n```python\nx\n```', 'cpp'), 'int main(){}\n')
  assert.equal(extractCode('```\nprint(3)\n```'), 'print(3)\n')
  assert.equal(extractCode('no code here'), undefined)
  assert.equal(extractCode('```python\n\n```'), undefined, 'an empty block is no program')
})

test('every test passed is 1; a failure 0, or passed over total with partial (every test then run)', async () => {
  const response = '```python\nprint(sum(map(int, input().split())))\n```'
  const accepted = scripted('accepted', 4)
  assert.deepEqual(await codeReward(accepted, response, tests), {
    reward: 1,
    verdict: 'accepted',
    passed: 4,
    total: 4,
    code: 'print(sum(map(int, input().split())))\n',
    fleetFault: false
  })
  assert.equal(accepted.asked[0]?.run_all, undefined, 'all or nothing stops at the first failure')
  assert.equal((await codeReward(scripted('wrong_answer', 3), response, tests)).reward, 0)
  const partial = scripted('wrong_answer', 3)
  assert.equal((await codeReward(partial, response, tests, { partial: true })).reward, 0.75)
  assert.equal(partial.asked[0]?.run_all, true)
  assert.equal((await codeReward(scripted('compile_error'), response, tests, { partial: true })).reward, 0)
  const cpp = scripted('accepted', 1)
  await codeReward(cpp, '```cpp\nint main(){}\n```', { language: 'cpp', tests: [{ stdin: '' }], timeout_ms: 2000 })
  assert.deepEqual(
    [cpp.asked[0]?.language, cpp.asked[0]?.timeout_ms, cpp.asked[0]?.tests],
    ['cpp', 2000, [{ stdin: '' }]]
  )
})

test("the fleet's verdicts and a refused judge are not scored; no program is a 0 and asks nothing", async () => {
  const response = '```python\nprint(1)\n```'
  for (const verdict of ['overloaded', 'queue_timeout', 'infra_error'] as const) {
    const r = await codeReward(scripted(verdict), response, tests)
    assert.deepEqual([r.reward, r.fleetFault, r.unscored?.startsWith(verdict)], [0, true, true], verdict)
  }
  const refused = await codeReward(scripted('invalid_request'), response, tests)
  assert.deepEqual([refused.fleetFault, refused.unscored?.startsWith('invalid_request')], [false, true])
  const none = scripted('accepted')
  assert.deepEqual(await codeReward(none, 'I cannot solve it.', tests), {
    reward: 0,
    verdict: 'no_code',
    passed: 0,
    total: 4,
    fleetFault: false
  })
  assert.equal(none.asked.length, 0)
})
