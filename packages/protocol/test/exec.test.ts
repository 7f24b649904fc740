import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import {
  ExecRequestSchema,
  ExecResultSchema,
  LIMITS,
  failedResult,
  mayHaveRun,
  resolveExecRequest
} from '../src/index.ts'

const request = TypeCompiler.Compile(ExecRequestSchema)
const result = TypeCompiler.Compile(ExecResultSchema)

test('resolveExecRequest applies the documented defaults', () => {
  assert.deepEqual(resolveExecRequest({ code: 'print(1)' }), {
    language: 'python',
    code: 'print(1)',
    stdin: '',
    timeout_ms: LIMITS.defaultTimeoutMs,
    memory_mb: LIMITS.defaultMemoryMb,
    files: {},
    fetch_files: [],
    isolation: 'fork'
  })
  assert.equal(
    resolveExecRequest({ code: 'x' }, { isolation: 'reuse' }).isolation,
    'reuse',
    "the runner's default level"
  )
  assert.equal(
    resolveExecRequest({ code: 'x', isolation: 'fork' }, { isolation: 'reuse' }).isolation,
    'fork',
    "the call's own level"
  )
})

test('the request schema rejects what the contract forbids, naming the field', () => {
  assert.equal(request.Check({ code: 'x' }), true)
  const cases: Array<[unknown, string]> = [
    [{}, '/code'],
    [{ code: 'x', language: 'cobol' }, '/language'],
    [{ code: 'x', timeout_ms: 0 }, '/timeout_ms'],
    [{ code: 'x', memory_mb: LIMITS.maxMemoryMb + 1 }, '/memory_mb'],
    [{ code: 'x', surprise: 1 }, '/surprise']
  ]
  for (const [body, path] of cases) {
    const errors = [...request.Errors(body)]
    assert.ok(
      errors.some((e) => e.path === path),
      `${JSON.stringify(body)} should fail at ${path}`
    )
  }
})

test('failedResult builds a valid result with the stable code as error.type', () => {
  const r = failedResult('infra_error', 'SF_ERR_TEST', 'runner went away')
  assert.equal(result.Check(r), true)
  assert.equal(r.error?.type, 'SF_ERR_TEST')
})

test("mayHaveRun: the code's statuses ran, a refusal did not; a fleet status says it with maybe_ran", () => {
  for (const status of ['ok', 'error', 'timeout', 'memory', 'killed'] as const)
    assert.equal(mayHaveRun({ status }), true, status)
  assert.equal(mayHaveRun({ status: 'invalid_request' }), false)
  assert.equal(mayHaveRun({ status: 'overloaded' }), false)
  assert.equal(mayHaveRun({ status: 'queue_timeout' }), false)
  assert.equal(mayHaveRun({ status: 'infra_error' }), true, 'an infra_error that does not say is taken as may have run')
  assert.equal(mayHaveRun({ status: 'infra_error', maybe_ran: false }), false)
  assert.equal(mayHaveRun({ status: 'infra_error', maybe_ran: true }), true)
  assert.ok(result.Check({ ...failedResult('infra_error', 'SF_ERR_X', 'x'), maybe_ran: true, replayed: false }))
})
