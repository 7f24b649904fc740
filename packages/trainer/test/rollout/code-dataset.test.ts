/** Code problems' tests as the datasets publish them: APPS/TACO, LiveCodeBench, verl's rows, sandfleet's own. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codeTestsOf, parseDatasetLine } from '@sandfleet/trainer'

test("APPS's input_output as JSON text, TACO's fn_name beside it and its time limit", () => {
  const apps = parseDatasetLine(
    JSON.stringify({ question: 'Add.', input_output: JSON.stringify({ inputs: ['1 2\n'], outputs: ['3\n'] }) }),
    1
  )
  assert.deepEqual(apps.tests, { input_output: { inputs: ['1 2\n'], outputs: ['3\n'] } })
  assert.equal(apps.reference, null)
  assert.deepEqual(
    codeTestsOf(
      {
        input_output: { inputs: [[[1, 2]]], outputs: [[3]] },
        fn_name: 'add',
        time_limit: '2 seconds',
        memory_limit: 256
      },
      2
    ),
    { input_output: { inputs: [[[1, 2]]], outputs: [[3]], fn_name: 'add' }, timeout_ms: 2000, memory_mb: 256 }
  )
})

test("LiveCodeBench's test cases, stdin and functional, public and private together", () => {
  const stdin = codeTestsOf(
    {
      public_test_cases: JSON.stringify([{ input: '1 2\n', output: '3\n', testtype: 'stdin' }]),
      private_test_cases: [{ input: '5 5\n', output: '10\n', testtype: 'stdin' }]
    },
    1
  )
  assert.deepEqual(stdin, { input_output: { inputs: ['1 2\n', '5 5\n'], outputs: ['3\n', '10\n'] } })
  const functional = codeTestsOf(
    {
      public_test_cases: [{ input: '[2,7,11,15]\n9', output: '[0, 1]', testtype: 'functional' }],
      metadata: JSON.stringify({ func_name: 'twoSum' })
    },
    2
  )
  assert.deepEqual(functional, {
    input_output: { inputs: [[[2, 7, 11, 15], 9]], outputs: [[0, 1]], fn_name: 'twoSum' }
  })
  assert.throws(
    () => codeTestsOf({ public_test_cases: [{ input: '1', output: '1', testtype: 'functional' }] }, 3),
    /func_name/
  )
  assert.throws(() => codeTestsOf({ private_test_cases: 'eJzLSM3JyQcABiwCFQ==' }, 4), /line 4: .*decompressed/)
})

test("verl's reward_model.ground_truth, sandfleet's tests with a language; a math line has none", () => {
  assert.deepEqual(
    codeTestsOf({ reward_model: { ground_truth: JSON.stringify({ inputs: ['a'], outputs: ['a'] }) } }, 1),
    { input_output: { inputs: ['a'], outputs: ['a'] } }
  )
  assert.equal(codeTestsOf({ reward_model: { ground_truth: '42' } }, 1), undefined, "a math row's ground truth")
  assert.deepEqual(codeTestsOf({ tests: [{ stdin: '1', expected: '1' }], language: 'cpp' }, 1), {
    tests: [{ stdin: '1', expected: '1' }],
    language: 'cpp'
  })
  assert.equal(codeTestsOf({ question: '1+1?', answer: '2' }, 1), undefined)
  assert.throws(() => codeTestsOf({ input_output: { inputs: ['1'] } }, 9), /line 9: input_output needs/)
})
