import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  NO_CALL_CONTEXT,
  RUNNER_HEADERS,
  budgetLeft,
  callContext,
  contextHeaders,
  contextOfHeaders,
  withDeadline
} from '../src/index.ts'

test('a call context is frozen: its deadline from a budget, or none; a new deadline makes a new context', () => {
  const signal = new AbortController().signal
  const context = callContext({ budgetMs: 500, tenant: 'a', signal, requestId: 'req-1' }, 1000)
  assert.ok(Object.isFrozen(context))
  assert.deepEqual([context.deadline, context.tenant, context.signal, context.requestId], [1500, 'a', signal, 'req-1'])
  assert.throws(() => {
    ;(context as { tenant: string }).tenant = 'b'
  }, TypeError)
  assert.deepEqual([budgetLeft(context, 1200), budgetLeft(context, 2000)], [300, 0])
  assert.equal(NO_CALL_CONTEXT.deadline, Infinity, 'no deadline of the caller’s')
  assert.equal(budgetLeft(NO_CALL_CONTEXT), Infinity)
  const later = withDeadline(context, 9000)
  assert.ok(Object.isFrozen(later))
  assert.deepEqual([later.deadline, later.tenant, later.signal, later.requestId], [9000, 'a', signal, 'req-1'])
  assert.equal(context.deadline, 1500, 'the first is unchanged')
})

test('a call context crosses to a runner as headers: what is left of its deadline in whole ms, its tenant, its request id', () => {
  const context = callContext({ budgetMs: 1000.7, tenant: 'team', requestId: 'req-9' }, 0)
  const headers = contextHeaders(context, 400)
  assert.deepEqual(headers, {
    [RUNNER_HEADERS.queueTimeoutMs]: '600',
    [RUNNER_HEADERS.tenant]: 'team',
    [RUNNER_HEADERS.requestId]: 'req-9'
  })
  const signal = new AbortController().signal
  const read = contextOfHeaders(headers, signal, 'req-9', 5000)
  assert.deepEqual([read?.deadline, read?.tenant, read?.signal, read?.requestId], [5600, 'team', signal, 'req-9'])
  assert.deepEqual(contextHeaders(NO_CALL_CONTEXT), {}, 'nothing to say: no header')
  assert.equal(contextOfHeaders({}, undefined, undefined)?.deadline, Infinity)
  assert.equal(contextHeaders(callContext({ budgetMs: 10 }, 0), 50)[RUNNER_HEADERS.queueTimeoutMs], '0', 'passed: 0')
  for (const bad of ['-1', '1.5', 'soon', '', ['1', '2']])
    assert.equal(
      contextOfHeaders({ [RUNNER_HEADERS.queueTimeoutMs]: bad }, undefined, undefined),
      undefined,
      String(bad)
    )
  assert.equal(contextOfHeaders({ [RUNNER_HEADERS.tenant]: '' }, undefined, undefined)?.tenant, undefined)
})
