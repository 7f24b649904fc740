import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import {
  GRACES,
  JUDGE_LANGUAGE_NAMES,
  JUDGE_LANGUAGE_TABLE,
  JUDGE_LANGUAGES,
  JUDGE_LIMITS,
  JUDGE_VERDICTS,
  JudgeBatchRequestSchema,
  JudgeRequestSchema,
  JudgeResultSchema,
  compileArgv,
  failedJudgeResult,
  isRetriableVerdict,
  judgeLanguageRow,
  judgeRequestProblem,
  judgeTimeBoundMs,
  resolveJudgeRequest,
  type JudgeRequest
} from '../src/index.ts'

const request = TypeCompiler.Compile(JudgeRequestSchema)
const result = TypeCompiler.Compile(JudgeResultSchema)

test('the language table: one row a language, every name and alias unique, compiled rows with their argv', () => {
  assert.deepEqual(
    JUDGE_LANGUAGE_TABLE.map((r) => r.name),
    [...JUDGE_LANGUAGES]
  )
  const names = JUDGE_LANGUAGE_NAMES.map((n) => n.toLowerCase())
  assert.equal(new Set(names).size, names.length, 'a name or alias names one language')
  for (const name of ['python', 'cpp', 'c', 'javascript']) assert.ok(JUDGE_LANGUAGES.includes(name as never))
  assert.equal(judgeLanguageRow('C++')?.name, 'cpp', 'aliases in any case')
  assert.equal(judgeLanguageRow('py3')?.name, 'python')
  assert.equal(judgeLanguageRow('cobol'), undefined)
  assert.deepEqual(compileArgv(judgeLanguageRow('cpp')!), [
    'g++',
    '-std=c++17',
    '-O2',
    '-DONLINE_JUDGE',
    '-pipe',
    '-o',
    'main',
    'main.cpp'
  ])
  assert.deepEqual(compileArgv(judgeLanguageRow('c')!)?.slice(-3), ['main', 'main.c', '-lm'])
  assert.equal(compileArgv(judgeLanguageRow('python')!), undefined, "Python's compile step is the executor's own")
  for (const row of JUDGE_LANGUAGE_TABLE) {
    if (row.runtime === 'binary') assert.ok(row.compile !== undefined && row.version !== undefined, row.name)
  }
})

test('the request schema takes both test forms, input_output and every compare, and refuses the rest naming the field', () => {
  const ok: JudgeRequest[] = [
    { code: 'print(1)', tests: [{ stdin: '1\n', expected: '1\n' }, {}] },
    { language: 'cpp', code: 'int main(){}', tests: [{ stdin: '' }], compare: 'tokens', run_all: true },
    { code: 'def f(a): return a', tests: [{ call: { function: 'f', args: [[1, 2]] }, expected: [1, 2] }] },
    { code: 'x', input_output: { inputs: ['1\n'], outputs: ['1\n'] }, compare: { float: 1e-6 } },
    {
      language: 'c++',
      code: 'x',
      tests: [{ stdin: '1' }],
      compare: { checker: { language: 'python', code: 'import sys' } },
      timeout_ms: 1000,
      memory_mb: 256,
      compile_timeout_ms: 20_000,
      isolation: 'reuse',
      request_id: 'r1'
    }
  ]
  for (const body of ok) assert.equal(request.Check(body), true, JSON.stringify(body))
  const bad: Array<[unknown, string]> = [
    [{ tests: [{}] }, '/code'],
    [{ code: 'x', language: 'cobol', tests: [{}] }, '/language'],
    [{ code: 'x', tests: [] }, '/tests'],
    [{ code: 'x', tests: [{ stdin: 1 }] }, '/tests/0'],
    [{ code: 'x', tests: [{ stdin: '', call: { function: 'f', args: [] } }] }, '/tests/0'],
    [{ code: 'x', tests: [{}], compare: 'fuzzy' }, '/compare'],
    [{ code: 'x', tests: [{}], compare: { float: 2 } }, '/compare'],
    [{ code: 'x', tests: [{}], timeout_ms: 0 }, '/timeout_ms'],
    [{ code: 'x', tests: [{}], compile_timeout_ms: 0 }, '/compile_timeout_ms'],
    [{ code: 'x', tests: [{}], memory_mb: 1 }, '/memory_mb'],
    [{ code: 'x', tests: [{}], surprise: 1 }, '/surprise'],
    [{ code: 'x', tests: Array.from({ length: JUDGE_LIMITS.maxTests + 1 }, () => ({})) }, '/tests']
  ]
  for (const [body, path] of bad) {
    const errors = [...request.Errors(body)]
    assert.ok(
      errors.some((e) => e.path === path),
      `${JSON.stringify(body).slice(0, 80)} should fail at ${path}: ${JSON.stringify(errors.map((e) => e.path))}`
    )
  }
  assert.equal(TypeCompiler.Compile(JudgeBatchRequestSchema).Check({ requests: [ok[0]] }), true)
})

test('judgeRequestProblem: what the schema cannot say, each naming its field', () => {
  const cases: Array<[JudgeRequest, string | undefined]> = [
    [{ code: 'x', tests: [{}] }, undefined],
    [{ code: 'x' }, 'tests'],
    [{ code: 'x', tests: [{}], input_output: { inputs: [''], outputs: [''] } }, 'input_output'],
    [{ code: 'x', input_output: { inputs: ['1', '2'], outputs: ['1'] } }, 'input_output/outputs'],
    [{ code: 'x', input_output: { inputs: [], outputs: [] } }, 'input_output/inputs'],
    [{ code: 'x', input_output: { inputs: [3], outputs: ['1'] } }, 'input_output/inputs/0'],
    [{ code: 'x', input_output: { inputs: ['1'], outputs: [{}] } }, 'input_output/outputs/0'],
    [{ code: 'x', input_output: { inputs: ['1'], outputs: [1], fn_name: 'f' } }, 'input_output/inputs/0'],
    [
      { language: 'cpp', code: 'x', input_output: { inputs: [[1]], outputs: [1], fn_name: 'f' } },
      'input_output/fn_name'
    ],
    [{ language: 'cpp', code: 'x', tests: [{}, { call: { function: 'f', args: [] } }] }, 'tests/1/call'],
    [
      { language: 'javascript', code: 'x', tests: [{}], compare: { checker: { language: 'python', code: '' } } },
      'compare/checker/language'
    ],
    [{ code: 'x', tests: [{}], compare: { checker: { language: 'js', code: '' } } }, 'compare/checker/language']
  ]
  for (const [body, field] of cases) assert.equal(judgeRequestProblem(body)?.field, field, JSON.stringify(body))
})

test('resolveJudgeRequest: defaults, the language by its name, every test form as one', () => {
  const r = resolveJudgeRequest({ language: 'C++', code: 'x', tests: [{ stdin: '1', expected: '2' }, {}] })
  assert.deepEqual(r, {
    language: 'cpp',
    code: 'x',
    tests: [{ stdin: '1', expected: { text: '2' } }, { stdin: '' }],
    compare: { kind: 'lines' },
    run_all: false,
    timeout_ms: JUDGE_LIMITS.defaultTimeoutMs,
    memory_mb: JUDGE_LIMITS.defaultMemoryMb,
    compile_timeout_ms: JUDGE_LIMITS.defaultCompileTimeoutMs,
    isolation: 'fork'
  })
  assert.equal(resolveJudgeRequest({ code: 'x', tests: [{}] }, { isolation: 'reuse' }).isolation, 'reuse')
  assert.equal(resolveJudgeRequest({ code: 'x', tests: [{}], request_id: 'q' }).request_id, 'q')
  const calls = resolveJudgeRequest({
    code: 'x',
    tests: [{ call: { function: 'f', args: [1] }, expected: null }, { call: { function: 'f', args: [] } }],
    compare: { float: 1e-3 }
  })
  assert.deepEqual(calls.tests, [
    { stdin: '', call: { function: 'f', args: [1] }, expected: { json: null } },
    { stdin: '', call: { function: 'f', args: [] } }
  ])
  assert.deepEqual(calls.compare, { kind: 'float', tolerance: 1e-3 })
  // APPS/TACO: stdin and outputs as strings or lines; fn_name calls with outputs as [value]
  assert.deepEqual(
    resolveJudgeRequest({ code: 'x', input_output: { inputs: ['1 2\n', ['3', '4']], outputs: ['3\n', ['7']] } }).tests,
    [
      { stdin: '1 2\n', expected: { text: '3\n' } },
      { stdin: '3\n4\n', expected: { text: '7\n' } }
    ]
  )
  assert.deepEqual(
    resolveJudgeRequest({
      code: 'x',
      input_output: { inputs: [[[2, 7], 9], [1]], outputs: [[[0, 1]], 5], fn_name: 'g' }
    }).tests,
    [
      { stdin: '', call: { function: 'g', args: [[2, 7], 9] }, expected: { json: [[0, 1]], or: [0, 1] } },
      { stdin: '', call: { function: 'g', args: [1] }, expected: { json: 5 } }
    ]
  )
  assert.deepEqual(
    resolveJudgeRequest({ code: 'x', tests: [{}], compare: { checker: { language: 'g++', code: 'c' } } }).compare,
    { kind: 'checker', language: 'cpp', code: 'c' }
  )
})

test('judgeTimeBoundMs covers the compile and every test to its deadline and soft stop, a checker too', () => {
  const soft = GRACES.softStopMs
  assert.equal(
    judgeTimeBoundMs({ tests: [{}, {}], timeout_ms: 1000, compile_timeout_ms: 3000 }),
    3000 + soft + 2 * (1000 + soft)
  )
  assert.equal(
    judgeTimeBoundMs({ input_output: { inputs: ['', '', ''], outputs: ['', '', ''] } }),
    JUDGE_LIMITS.defaultCompileTimeoutMs + soft + 3 * (JUDGE_LIMITS.defaultTimeoutMs + soft)
  )
  const checked = judgeTimeBoundMs({
    tests: [{}],
    timeout_ms: 100,
    compile_timeout_ms: 1000,
    compare: { checker: { language: 'c', code: '' } }
  })
  assert.equal(checked, 2 * (1000 + soft) + 100 + soft + JUDGE_LIMITS.checkerMinTimeoutMs + soft)
})

test("verdicts: the fleet's are retriable and never the program's; a failed judge is a valid result", () => {
  for (const v of JUDGE_VERDICTS)
    assert.equal(isRetriableVerdict(v), ['overloaded', 'queue_timeout', 'infra_error'].includes(v), v)
  const r = failedJudgeResult('queue_timeout', 'cpp', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'waited too long')
  assert.equal(result.Check(r), true)
  assert.equal(
    result.Check({
      ...r,
      verdict: 'wrong_answer',
      passed: 1,
      total: 3,
      compile: { status: 'ok', stdout: '', stderr: '', exit_code: 0, duration_ms: 300, cpu_ms: 280, cached: false },
      tests: [
        { verdict: 'accepted', stdout: '3\n', stderr: '', exit_code: 0, duration_ms: 1, cpu_ms: 0.5 },
        { verdict: 'wrong_answer', stdout: '4\n', stderr: '', exit_code: 0, duration_ms: 1 },
        { verdict: 'skipped' }
      ]
    }),
    true
  )
})
