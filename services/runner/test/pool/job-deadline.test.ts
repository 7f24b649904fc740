import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveExecRequest } from '@sandfleet/protocol'
import { JobDeadline } from '../../src/pool/job-deadline.ts'

const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
const job = (timeoutMs: number) => ({
  request: resolveExecRequest({ code: 'print(1)', timeout_ms: timeoutMs }),
  maxOutputBytes: 65536
})

// Real timers with wide margins (hundreds of ms either side of each deadline), for a busy machine.
test('a job whose frame took long to reach its sandbox has its deadline count from its arrival, not from the hand-off', async () => {
  const expired: string[] = []
  const deadline = new JobDeadline('slow delivery', job(1800), 200, (of, d) => {
    expired.push(`${of}: ${d.describe()}`)
  })
  await sleep(1500) // the frame is still on its way (a large stdin through a busy runner)
  deadline.delivered() // the deadline: 1500 + 2000 ms from the hand-off, no longer 2000
  await sleep(1200)
  assert.deepEqual(expired, [], "not at the hand-off's deadline")
  for (let waited = 0; expired.length === 0 && waited < 10_000; waited += 100) await sleep(100)
  assert.deepEqual(expired, [
    "slow delivery: stalled: the sandbox did not answer within timeout_ms=1800 plus 200 ms after the job reached it; it was stopped and is replaced (the fleet's fault, not a timeout of the code: the job may have run)"
  ])
})

test('a job that reached its sandbox late and its process later still has its deadline count from the later', async () => {
  const expired: string[] = []
  const deadline = new JobDeadline('slow hand-over', job(1500), 200, (of) => {
    expired.push(String(of))
  })
  await sleep(300)
  deadline.delivered() // the frame is all out: 300 + 1700 ms
  await sleep(900)
  deadline.delivered() // the sandbox handed the job to its process: 1200 + 1700 ms
  await sleep(1100) // past the first arrival's deadline (2000 ms from the hand-off)
  assert.deepEqual(expired, [], "counted from the job's hand-over to its process")
  for (let waited = 0; expired.length === 0 && waited < 10_000; waited += 100) await sleep(100)
  assert.deepEqual(expired, ['slow hand-over'])
})
