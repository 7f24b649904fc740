import { test } from 'node:test'
import assert from 'node:assert/strict'
import { batchTarget, main, parseBuild } from '../src/serve-ab.ts'

test('serve-ab refuses fewer than two NAME=CHECKOUT builds, or a malformed one, before starting anything', async () => {
  assert.equal(await main([], {}), 2)
  assert.equal(await main(['only=/tmp'], {}), 2)
  assert.equal(await main(['a=/tmp', 'b'], {}), 2)
  assert.equal(await main(['a=/tmp', '=/tmp'], {}), 2)
})

test('a build may give its serve variables: NAME=CHECKOUT@VAR=VALUE@...; a malformed one is refused', async () => {
  assert.deepEqual(parseBuild('old=/repo@SANDFLEET_EXECUTOR_PATH=/tmp/x.py@A=b=c'), {
    name: 'old',
    dir: '/repo',
    env: { SANDFLEET_EXECUTOR_PATH: '/tmp/x.py', A: 'b=c' }
  })
  assert.deepEqual(parseBuild('new=/repo'), { name: 'new', dir: '/repo', env: {} })
  assert.equal(parseBuild('a=/repo@novalue'), undefined)
  assert.equal(parseBuild('a=@X=1'), undefined)
  assert.equal(await main(['a=/tmp@bad', 'b=/tmp'], {}), 2)
})

test('SANDFLEET_AB_BATCH makes each request a /v1/execute/batch of that many copies of the call, each item checked; 0 is the call alone', () => {
  const call = JSON.stringify({ language: 'javascript', code: 'console.log(1+1)' })
  const single = batchTarget('http://x', call, 0, '2\n')
  assert.deepEqual([single.path, single.body, single.callsPerRequest], ['/v1/execute', call, 1])
  const batch = batchTarget('http://x', call, 3, '2\n')
  assert.equal(batch.path, '/v1/execute/batch')
  assert.equal(batch.callsPerRequest, 3)
  assert.deepEqual(JSON.parse(batch.body as string), {
    requests: [JSON.parse(call), JSON.parse(call), JSON.parse(call)]
  })
  const ok = { status: 'ok', stdout: '2\n' }
  assert.deepEqual(
    batch.classify(200, JSON.stringify({ results: [ok, { ...ok, stdout: '3\n' }, { status: 'queue_timeout' }] })),
    ['ok', 'wrong_output', 'queue_timeout']
  )
})

test('serve-ab refuses a SANDFLEET_AB_BATCH that is not a whole number, or an unknown SANDFLEET_AB_SANDBOX, before starting anything', async () => {
  assert.equal(await main(['a=/tmp', 'b=/tmp'], { SANDFLEET_AB_BATCH: 'many' }), 2)
  assert.equal(await main(['a=/tmp', 'b=/tmp'], { SANDFLEET_AB_BATCH: '-1' }), 2)
  assert.equal(await main(['a=/tmp', 'b=/tmp'], { SANDFLEET_AB_SANDBOX: 'docker' }), 2)
})

test('with ndjson the batch is streamed: the accept header asks for it and the lines are classified by index', () => {
  const target = batchTarget('http://x', JSON.stringify({ code: 'print(1+1)' }), 2, '2\n', true)
  assert.deepEqual(
    [target.path, target.accept, target.callsPerRequest],
    ['/v1/execute/batch', 'application/x-ndjson', 2]
  )
  assert.deepEqual(
    target.classify(
      200,
      '{"index":1,"result":{"status":"ok","stdout":"2\\n"}}\n{"index":0,"result":{"status":"error","stdout":""}}\n'
    ),
    ['error', 'ok']
  )
})

test('serve-ab refuses an unknown SANDFLEET_AB_WORKLOAD before starting anything', async () => {
  assert.equal(await main(['a=/tmp', 'b=/tmp'], { SANDFLEET_AB_WORKLOAD: 'fizzbuzz' }), 2)
  assert.equal(
    await main(['a=/tmp', 'b=/tmp'], { SANDFLEET_AB_WORKLOAD: 'jsonl' }),
    2,
    'jsonl without SANDFLEET_AB_FILE'
  )
})
