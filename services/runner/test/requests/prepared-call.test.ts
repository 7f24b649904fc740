import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NO_CALL_CONTEXT, callContext } from '@sandfleet/protocol'
import { runnerConfig } from '../../src/config.ts'
import { prepareCall } from '../../src/requests/prepared-call.ts'

const config = runnerConfig({ queueTimeoutMs: 10_000 })
const served = new Map()

test('a prepared call is complete and frozen: its job carries its deadline for waiting and its tenant, nothing writes into it', () => {
  const signal = new AbortController().signal
  const context = callContext({ budgetMs: 2000, tenant: 'team-a', signal, requestId: 'req-3' }, 1000)
  const call = prepareCall({ code: 'print(1)', request_id: 'mine' }, context, config, served, 1000)
  assert.ok(Object.isFrozen(call) && Object.isFrozen(call.job) && Object.isFrozen(call.job?.request))
  assert.deepEqual(
    [call.job?.startBy, call.job?.tenant, call.job?.request.request_id, call.requestId, call.context],
    [3000, 'team-a', 'mine', 'mine', context]
  )
  assert.throws(() => {
    ;(call.job as { tenant?: string }).tenant = 'team-b'
  }, TypeError)
})

test("a job's deadline for waiting is its context's, capped by the runner's queueTimeoutMs; without one, the runner's alone", () => {
  const startBy = (context = NO_CALL_CONTEXT): number | undefined =>
    prepareCall({ code: 'x' }, context, config, served, 500).job?.startBy
  assert.equal(startBy(), 10_500)
  assert.equal(startBy(callContext({ budgetMs: 60_000 }, 500)), 10_500, 'a caller may not make it wait longer')
  assert.equal(startBy(callContext({ budgetMs: 100 }, 500)), 600)
  assert.equal(startBy(callContext({ deadline: 400 })), 400, 'a deadline already passed stays passed')
})

test('a refused call keeps its context and request id, and has no job', () => {
  const context = callContext({ tenant: 't' })
  const call = prepareCall({ code: 'x', timeout_ms: 10 ** 9, request_id: 'r' }, context, config, served)
  assert.ok(Object.isFrozen(call))
  assert.deepEqual(
    [call.job, call.problem?.field, call.requestId, call.context],
    [undefined, 'timeout_ms', 'r', context]
  )
})
