import { test } from 'node:test'
import assert from 'node:assert/strict'
import { JUDGE_LIMITS, NO_CALL_CONTEXT, callContext, type JudgeRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../src/config.ts'
import { prepareJudge } from '../../src/judge/prepared-judge.ts'

const config = runnerConfig({ maxCodeBytes: 100, maxTimeoutMs: 5000, maxMemoryMb: 512, isolation: 'reuse' })
const ALL = new Set(['python', 'cpp', 'c'])

/** The field a request is refused at, and the code, or undefined when it is taken. */
function refusal(request: JudgeRequest, judged: ReadonlySet<string> = ALL): string | undefined {
  const p = prepareJudge(request, NO_CALL_CONTEXT, config, judged)
  return p.problem === undefined ? undefined : `${p.problem.code} ${p.problem.field}`
}

test("a judge request over the runner's limits is refused naming the field, and nothing past them", () => {
  const t = [{ stdin: '1', expected: '1' }]
  assert.equal(refusal({ code: 'x', tests: t }), undefined)
  assert.equal(refusal({ code: 'x'.repeat(101), tests: t }), 'SF_ERR_RUNNER_LIMIT code')
  assert.equal(
    refusal({ code: 'x', tests: t, compare: { checker: { language: 'python', code: 'y'.repeat(101) } } }),
    'SF_ERR_RUNNER_LIMIT compare/checker/code'
  )
  assert.equal(refusal({ code: 'x', tests: t, timeout_ms: 5001 }), 'SF_ERR_RUNNER_LIMIT timeout_ms')
  assert.equal(refusal({ code: 'x', tests: t, compile_timeout_ms: 5001 }), 'SF_ERR_RUNNER_LIMIT compile_timeout_ms')
  assert.equal(refusal({ code: 'x', tests: t, memory_mb: 513 }), 'SF_ERR_RUNNER_LIMIT memory_mb')
  assert.equal(
    refusal({ code: 'x', input_output: { inputs: ['1'], outputs: [] } }),
    'SF_ERR_RUNNER_INVALID_REQUEST input_output/outputs'
  )
})

test('a language, or a checker language, the runner does not judge is refused naming its field', () => {
  const t = [{ stdin: '1' }]
  assert.equal(
    refusal({ language: 'cpp', code: 'x', tests: t }, new Set(['python'])),
    'SF_ERR_RUNNER_LANGUAGE language'
  )
  assert.equal(
    refusal({ code: 'x', tests: t, compare: { checker: { language: 'c', code: '' } } }, new Set(['python'])),
    'SF_ERR_RUNNER_LANGUAGE compare/checker/language'
  )
  assert.match(
    prepareJudge({ code: 'x', tests: t }, NO_CALL_CONTEXT, config, new Set()).problem?.message ?? '',
    /judges no language/
  )
})

test("a prepared judge carries the contract's defaults and the runner's level, held to fork where reuse is not allowed", () => {
  const p = prepareJudge({ code: 'x', tests: [{}] }, NO_CALL_CONTEXT, config, ALL)
  assert.equal(p.judge?.isolation, 'reuse')
  assert.equal(p.judge?.timeout_ms, JUDGE_LIMITS.defaultTimeoutMs)
  const noReuse = runnerConfig({ allowReuse: false })
  assert.equal(
    prepareJudge({ code: 'x', tests: [{}], isolation: 'reuse' }, NO_CALL_CONTEXT, noReuse, ALL).judge?.isolation,
    'fork'
  )
})

test("a prepared judge keeps its context and its deadline for waiting: the context's, capped by queueTimeoutMs", () => {
  const t0 = performance.now()
  const soon = prepareJudge({ code: 'x', tests: [{}] }, callContext({ budgetMs: 50, tenant: 'a' }, t0), config, ALL, t0)
  assert.equal(soon.startBy, t0 + 50)
  assert.equal(soon.context.tenant, 'a')
  const none = prepareJudge({ code: 'x', tests: [{}] }, NO_CALL_CONTEXT, config, ALL, t0)
  assert.equal(none.startBy, t0 + config.queueTimeoutMs)
  assert.ok(Object.isFrozen(none))
})
