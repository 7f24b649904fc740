import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TARGET_TABLE } from '../../src/run/targets.ts'

const call = (code: string, nonce: string) => ({ call: { code, status: 'ok', stdin: 'x', timeoutMs: 500 }, nonce })

test("each target builds its API's request, carrying the nonce where the API echoes one", () => {
  assert.deepEqual(JSON.parse(TARGET_TABLE.single.body([call('a', 'n-0')])), {
    code: 'a',
    request_id: 'n-0',
    stdin: 'x',
    timeout_ms: 500
  })
  assert.deepEqual(
    JSON.parse(TARGET_TABLE.batch.body([call('a', 'n-0'), call('b', 'n-1')])).requests.map(
      (r: { request_id: string }) => r.request_id
    ),
    ['n-0', 'n-1']
  )
  assert.equal(TARGET_TABLE.ndjson.accept, 'application/x-ndjson')
  assert.deepEqual(JSON.parse(TARGET_TABLE['run-code'].body([call('a', 'n-0')])), {
    code: 'a',
    language: 'python',
    stdin: 'x',
    run_timeout: 0.5
  })
  assert.deepEqual(JSON.parse(TARGET_TABLE['long-batch'].body([call('a', 'n-0')])), {
    type: 'batch',
    submissions: [{ type: 'python', solution: 'a', input: 'x', sub_id: 'n-0' }]
  })
})

test("each target reads its API's answers back into sandfleet's statuses", () => {
  assert.deepEqual(TARGET_TABLE.single.read(200, '{"status":"ok","stdout":"2\\n","request_id":"n-0"}'), {
    answers: [{ position: 0, status: 'ok', stdout: '2\n', nonce: 'n-0' }]
  })
  assert.deepEqual(
    TARGET_TABLE.single.read(200, '{"status":"ok","stdout":"2\\n","request_id":"n-0","cpu_ms":1.25}'),
    { answers: [{ position: 0, status: 'ok', stdout: '2\n', nonce: 'n-0', cpuMs: 1.25 }] },
    "the job's own CPU, when the result carries it"
  )
  assert.deepEqual(TARGET_TABLE.single.read(429, '{"status":"overloaded"}'), { failed: 'http_429' })
  assert.deepEqual(TARGET_TABLE.batch.read(200, '{"nope":1}'), { failed: 'bad_response' })
  const nd = TARGET_TABLE.ndjson.read(
    200,
    '{"index":1,"result":{"status":"error","stdout":"","request_id":"n-1"}}\n{"index":0,"result":{"status":"ok","stdout":"1\\n"}}\n'
  )
  assert.deepEqual(nd, {
    answers: [
      { position: 1, status: 'error', stdout: '', nonce: 'n-1' },
      { position: 0, status: 'ok', stdout: '1\n' }
    ]
  })
  const runCode = (body: object): string =>
    'answers' in TARGET_TABLE['run-code'].read(200, JSON.stringify(body))
      ? (TARGET_TABLE['run-code'].read(200, JSON.stringify(body)) as { answers: Array<{ status: string }> }).answers[0]
          .status
      : 'failed'
  assert.equal(runCode({ status: 'Success', run_result: { status: 'Finished', stdout: '2\n', return_code: 0 } }), 'ok')
  assert.equal(runCode({ status: 'Failed', run_result: { status: 'Finished', stdout: '', return_code: 1 } }), 'error')
  assert.equal(runCode({ status: 'Failed', run_result: { status: 'TimeLimitExceeded', stdout: '' } }), 'timeout')
  assert.equal(runCode({ status: 'SandboxError', run_result: null }), 'sandbox_error')
  const judge = TARGET_TABLE['long-batch'].read(
    200,
    JSON.stringify({
      sub_id: 'b',
      results: [
        { sub_id: 'n-0', run_success: true, stdout: '2\n', reason: '' },
        { sub_id: 'n-1', run_success: false, stdout: '', reason: '' },
        { sub_id: 'n-2', run_success: false, stdout: '', reason: 'worker_timeout' },
        { sub_id: 'n-3', run_success: false, stdout: '', reason: 'queue_timeout' }
      ]
    })
  )
  assert.ok('answers' in judge)
  assert.deepEqual(
    judge.answers.map((a) => [a.nonce, a.status]),
    [
      ['n-0', 'ok'],
      ['n-1', 'error'],
      ['n-2', 'timeout'],
      ['n-3', 'queue_timeout']
    ]
  )
})
