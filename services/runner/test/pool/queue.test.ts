import { test } from 'node:test'
import assert from 'node:assert/strict'
import { JobQueue } from '../../src/pool/queue.ts'

/**
 * Pushes each item with its deadline (ms from now) on a queue of its own, waits for its expiry
 * timer to answer them all, with no shift, and says in what order it did and what was left.
 */
async function expireAll(
  deadlines: Array<[string, number]>
): Promise<{ expired: string[]; length: number; nextExpiryAt: number }> {
  const expired: string[] = []
  let done!: () => void
  const all = new Promise<void>((resolve) => {
    done = resolve
  })
  const q = new JobQueue<string>({
    limit: 10,
    onExpire: (s) => {
      expired.push(s)
      if (expired.length === deadlines.length) done()
    }
  })
  const t0 = performance.now()
  for (const [item, ms] of deadlines) q.push(item, t0 + ms)
  await all
  const after = { expired, length: q.length, nextExpiryAt: q.nextExpiryAt }
  q.close()
  return after
}

test('queue: jobs leave in FIFO order, across growth of the ring', () => {
  const q = new JobQueue<number>({ limit: 1000, onExpire: () => assert.fail('nothing expires'), now: () => 0 })
  for (let i = 0; i < 300; i++) assert.notEqual(q.push(i, 100), undefined)
  const out: number[] = []
  for (let i = 0; i < 150; i++) out.push(q.shift() as number)
  for (let i = 300; i < 500; i++) q.push(i, 100)
  let v: number | undefined
  while ((v = q.shift()) !== undefined) out.push(v)
  assert.deepEqual(
    out,
    Array.from({ length: 500 }, (_, i) => i)
  )
  assert.equal(q.length, 0)
  q.close()
})

test('queue: past the bound push refuses (overloaded)', () => {
  const q = new JobQueue<string>({ limit: 2, onExpire: () => {}, now: () => 0 })
  assert.notEqual(q.push('a', 10), undefined)
  assert.notEqual(q.push('b', 10), undefined)
  assert.equal(q.push('c', 10), undefined)
  assert.equal(q.length, 2)
  q.shift()
  assert.notEqual(q.push('c', 10), undefined)
  q.close()
})

test('queue: a job past its deadline is expired, never returned', () => {
  let now = 0
  const expired: string[] = []
  const q = new JobQueue<string>({ limit: 10, onExpire: (s) => expired.push(s), now: () => now })
  q.push('old', 5)
  q.push('young', 50)
  now = 10
  assert.equal(q.shift(), 'young')
  assert.deepEqual(expired, ['old'])
  q.close()
})

test('queue: the one expiry timer answers waiting jobs without a shift', async () => {
  assert.deepEqual(
    await expireAll([
      ['a', 5],
      ['b', 15]
    ]),
    { expired: ['a', 'b'], length: 0, nextExpiryAt: Infinity },
    'no timer left armed on an empty queue'
  )
})

test('queue: cancel removes a job in place; drain hands out the rest in order', () => {
  const q = new JobQueue<string>({ limit: 10, onExpire: () => {}, now: () => 0 })
  q.push('a', 10)
  const b = q.push('b', 10) as number
  q.push('c', 10)
  assert.equal(q.cancel(b), true)
  assert.equal(q.cancel(b), false, 'a second cancel is a no-op')
  assert.equal(q.length, 2)
  const out: string[] = []
  q.drain((s) => out.push(s))
  assert.deepEqual(out, ['a', 'c'])
  assert.equal(q.shift(), undefined)
  q.close()
})

test('queue: a job with an earlier deadline than the jobs ahead of it is answered at its deadline, not at theirs', async () => {
  const expired: Array<[string, number]> = []
  const t0 = performance.now()
  let done!: () => void
  const first = new Promise<void>((resolve) => {
    done = resolve
  })
  const q = new JobQueue<string>({
    limit: 10,
    onExpire: (s) => {
      expired.push([s, performance.now() - t0])
      done()
    }
  })
  q.push('patient', t0 + 60_000)
  q.push('retried', t0 + 20)
  assert.ok(q.nextExpiryAt <= t0 + 20, 'the timer follows the earliest deadline')
  await first
  assert.deepEqual(
    expired.map(([s]) => s),
    ['retried']
  )
  assert.ok(expired[0][1] < 5_000, `answered after ${expired[0][1]} ms, not when the head's deadline passes`)
  assert.equal(q.length, 1)
  assert.equal(q.shift(), 'patient', 'the job ahead still leaves first')
  assert.equal(q.nextExpiryAt, Infinity)
  q.close()
})

test('queue: with deadlines in any order, what has time left runs in FIFO order and the rest expires, across growth and cancels', () => {
  let now = 0
  const expired: number[] = []
  const q = new JobQueue<number>({ limit: 1000, onExpire: (n) => expired.push(n), now: () => now })
  // deadline of job i: a scramble of 0..299 (not FIFO), every job's its own
  const deadlineOf = (i: number): number => ((i * 7919) % 300) + 1
  const tickets: number[] = []
  for (let i = 0; i < 300; i++) tickets.push(q.push(i, deadlineOf(i)) as number)
  for (let i = 0; i < 300; i += 3) assert.equal(q.cancel(tickets[i]), true)
  const shifted = [q.shift(), q.shift()]
  assert.deepEqual(shifted, [1, 2], 'FIFO order for the jobs that leave to run')
  now = 150.5
  const out: number[] = []
  let v: number | undefined
  while ((v = q.shift()) !== undefined) out.push(v)
  const left = Array.from({ length: 300 }, (_, i) => i).filter((i) => i % 3 !== 0 && i > 2)
  assert.deepEqual(
    out,
    left.filter((i) => deadlineOf(i) >= 150.5),
    'what had time left runs, in FIFO order'
  )
  assert.deepEqual(
    [...expired].sort((a, b) => a - b),
    left.filter((i) => deadlineOf(i) < 150.5),
    'every other job expired, none lost'
  )
  assert.equal(q.length, 0)
  q.close()
})

test('queue: the timer expires jobs in the order of their deadlines, whatever their order in the queue', async () => {
  const after = await expireAll([
    ['c', 30],
    ['a', 10],
    ['d', 40],
    ['b', 20]
  ])
  assert.deepEqual(after.expired, ['a', 'b', 'c', 'd'])
  assert.equal(after.nextExpiryAt, Infinity)
})
