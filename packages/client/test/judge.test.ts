/**
 * `SandfleetClient.judge` and `judgeBatch` against the fake fleet over real HTTP: the verdict as the fleet answers it,
 * the fleet's verdicts retried (a 429's Retry-After, a result's `overloaded`) and never a verdict on the program, a
 * refusal's field in its message, a batch in request order with only its fleet verdicts re-sent, a closed client.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { failedJudgeResult, type JudgeRequest } from '@sandfleet/protocol'
import { SandfleetClient, ClientError, type ClientOptions } from '@sandfleet/client'
import { errorReply, pythonJudge, startFakeFleet, type FakeJudgeBehavior } from '@sandfleet/client/testing'

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4 }
const SUM = 'a, b = map(int, input().split())\nprint(a + b)\n'
const tests = [
  { stdin: '1 2\n', expected: '3\n' },
  { stdin: '2 2\n', expected: '5\n' }
]

async function withClient(
  judge: FakeJudgeBehavior | undefined,
  fn: (client: SandfleetClient, fleet: Awaited<ReturnType<typeof startFakeFleet>>) => Promise<void>,
  options: Partial<ClientOptions> = {}
): Promise<void> {
  const fleet = await startFakeFleet(undefined, judge === undefined ? {} : { judge })
  const client = new SandfleetClient({ url: fleet.url, retry: fastRetry, ...options })
  try {
    await fn(client, fleet)
  } finally {
    await client.close()
    await fleet.close()
  }
}

test('judge answers the verdict, tests passed of total, each test; call tests return their value', async () => {
  await withClient(undefined, async (client) => {
    const r = await client.judge({ code: SUM, tests })
    assert.deepEqual([r.verdict, r.passed, r.total], ['wrong_answer', 1, 2])
    assert.deepEqual(
      r.tests.map((t) => t.verdict),
      ['accepted', 'wrong_answer']
    )
    assert.equal(client.stats.retries, 0, 'a verdict on the program is never retried')
    const call = await client.judge({
      code: 'class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]\n',
      input_output: { inputs: [[[2, 7, 11, 15], 9]], outputs: [[[0, 1]]], fn_name: 'twoSum' }
    })
    assert.equal(call.verdict, 'accepted', JSON.stringify(call))
  })
})

test("the fleet's verdicts are retried, a 429's Retry-After heeded; a verdict on the program is not", async () => {
  let calls = 0
  const busyTwice: FakeJudgeBehavior = async (req, ctx) => {
    calls++
    if (ctx.attempt === 1)
      return errorReply(429, 'overloaded', 'SF_ERR_GATEWAY_OVERLOADED', 'busy', { 'retry-after': '0' })
    if (ctx.attempt === 2) return failedJudgeResult('queue_timeout', 'python', 'SF_ERR_RUNNER_QUEUE_TIMEOUT', 'waited')
    return await pythonJudge(async () => ({
      status: 'ok',
      stdout: '3\n',
      stderr: '',
      exit_code: 0,
      duration_ms: 1,
      queue_ms: 0,
      truncated: { stdout: false, stderr: false },
      error: null,
      files: {},
      runner: 'fake',
      sandbox: 'f'
    }))(req, ctx)
  }
  await withClient(busyTwice, async (client) => {
    const r = await client.judge({ code: 'print(3)', tests: [{ expected: '3' }] })
    assert.equal(r.verdict, 'accepted')
    assert.equal(calls, 3)
    assert.equal(client.stats.retries, 2)
  })
  await withClient(
    async () => failedJudgeResult('infra_error', 'python', 'SF_ERR_X', 'down', { maybe_ran: false }),
    async (client) => {
      const r = await client.judge({ code: 'x', tests: [{}] })
      assert.deepEqual([r.verdict, r.error?.type], ['infra_error', 'SF_ERR_X'])
      assert.equal(client.stats.attempts, fastRetry.maxAttempts, 'retried until the attempts ran out')
    }
  )
})

test('a fleet verdict whose program may have run is not retried, unless retryMaybeRan', async () => {
  const stalled: FakeJudgeBehavior = async () =>
    failedJudgeResult('infra_error', 'python', 'SF_ERR_RUNNER_STALLED', 'stalled', { maybe_ran: true })
  await withClient(stalled, async (client) => {
    const r = await client.judge({ code: 'x', tests: [{}] })
    assert.deepEqual([r.verdict, r.maybe_ran], ['infra_error', true])
    assert.equal(client.stats.attempts, 1, 'a judge that may have run is answered as it is')
  })
  // absent on an infra_error: as true
  await withClient(
    async () => failedJudgeResult('infra_error', 'python', 'SF_ERR_X', 'lost'),
    async (client) => {
      await client.judge({ code: 'x', tests: [{}] })
      assert.equal(client.stats.attempts, 1)
    }
  )
  await withClient(
    stalled,
    async (client) => {
      await client.judge({ code: 'x', tests: [{}] })
      assert.equal(client.stats.attempts, fastRetry.maxAttempts, 'told to, the client retries it too')
    },
    { retryMaybeRan: true }
  )
})

test("a refusal is invalid_request naming the field; a batch keeps order and re-sends only the fleet's verdicts", async () => {
  const flaky: FakeJudgeBehavior = async (req, ctx) =>
    req.code.startsWith('#flaky') && ctx.attempt === 1
      ? failedJudgeResult('infra_error', 'python', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'died', { maybe_ran: false })
      : await pythonJudge(async (code, stdin) => ({
          status: 'ok',
          stdout: code.includes('wrong') ? 'x\n' : stdin,
          stderr: '',
          exit_code: 0,
          duration_ms: 1,
          queue_ms: 0,
          truncated: { stdout: false, stderr: false },
          error: null,
          files: {},
          runner: 'fake',
          sandbox: 'f'
        }))(req, ctx)
  await withClient(flaky, async (client, fleet) => {
    const requests: JudgeRequest[] = [
      { code: 'echo', tests: [{ stdin: 'a\n', expected: 'a\n' }] },
      { code: '#flaky echo', tests: [{ stdin: 'b\n', expected: 'b\n' }] },
      { code: 'wrong', tests: [{ stdin: 'c\n', expected: 'c\n' }] },
      { code: 'x', language: 'cpp', tests: [{ stdin: '' }], input_output: { inputs: [''], outputs: [''] } }
    ]
    const results = await client.judgeBatch(requests)
    assert.deepEqual(
      results.map((r) => r.verdict),
      ['accepted', 'accepted', 'wrong_answer', 'invalid_request']
    )
    assert.match(results[3]?.error?.message ?? '', /^input_output: /)
    const batches = fleet.log.filter((e) => e.path === '/v1/judge/batch').map((e) => e.items)
    assert.deepEqual(batches, [4, 1], 'only the judge with a fleet verdict was sent again')
  })
})

test('a closed client refuses to judge', async () => {
  await withClient(undefined, async (client) => {
    await client.close()
    await assert.rejects(client.judge({ code: 'x', tests: [{}] }), ClientError)
  })
})
