import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { ExecRequest, ExecResult } from '@sandfleet/protocol'
import { SandfleetClient, ClientError } from '@sandfleet/client'
import { startFakeFleet, errorReply, type FakeBehavior } from '@sandfleet/client/testing'

function result(status: ExecResult['status'], stdout = ''): ExecResult {
  return {
    status,
    stdout,
    stderr: '',
    exit_code: status === 'ok' ? 0 : 1,
    duration_ms: 1,
    queue_ms: 0,
    truncated: { stdout: false, stderr: false },
    error: status === 'ok' ? null : { type: 'X', message: status },
    files: {},
    runner: 'r',
    sandbox: 's'
  }
}
const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4 }

async function withFleet(
  behavior: FakeBehavior | undefined,
  fn: (url: string, fleet: Awaited<ReturnType<typeof startFakeFleet>>) => Promise<void>
): Promise<void> {
  const fleet = await startFakeFleet(behavior)
  try {
    await fn(fleet.url, fleet)
  } finally {
    await fleet.close()
  }
}

test('execute runs real Python code and returns stdout', async () => {
  await withFleet(undefined, async (url) => {
    const client = new SandfleetClient({ url })
    try {
      const r = await client.execute({ code: 'print(6*7)' })
      assert.equal(r.status, 'ok')
      assert.equal(r.stdout, '42\n')
      const bad = await client.execute({ code: 'raise ValueError("nope")' })
      assert.equal(bad.status, 'error')
      assert.equal(bad.error?.type, 'ValueError')
    } finally {
      await client.close()
    }
  })
})

test('concurrent single calls are coalesced into batch requests', async () => {
  await withFleet(
    (req) => result('ok', req.code),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, batchWindowMs: 20, maxBatch: 64 })
      try {
        const reqs: ExecRequest[] = Array.from({ length: 100 }, (_, i) => ({ code: `c${i}` }))
        const out = await Promise.all(reqs.map(async (r) => await client.execute(r)))
        assert.deepEqual(
          out.map((r) => r.stdout),
          reqs.map((r) => r.code),
          'each caller gets its own result'
        )
        const batches = fleet.log.filter((e) => e.path === '/v1/execute/batch')
        assert.ok(batches.length >= 2 && batches.length <= 4, `100 calls in ${batches.length} batches`)
        assert.ok(batches.every((b) => b.items <= 64))
        assert.equal(fleet.log.length, batches.length + fleet.log.filter((e) => e.path === '/v1/execute').length)
      } finally {
        await client.close()
      }
    }
  )
})

test('429 with Retry-After is retried until it succeeds', async () => {
  await withFleet(
    (req, ctx) =>
      ctx.attempt <= 2
        ? errorReply(429, 'overloaded', 'SF_ERR_GATEWAY_OVERLOADED', 'busy', { 'retry-after': '0' })
        : result('ok', 'done'),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, batchWindowMs: 0, retry: fastRetry })
      try {
        const r = await client.execute({ code: 'x', request_id: 'a' })
        assert.equal(r.status, 'ok')
        assert.equal(fleet.log.length, 3)
        assert.equal(client.stats.retries, 2)
      } finally {
        await client.close()
      }
    }
  )
})

test('an infra_error that surely did not run, and a queue_timeout, are retried; the last status reaches the caller', async () => {
  await withFleet(
    (req) => (req.code === 'infra' ? { ...result('infra_error'), maybe_ran: false } : result('queue_timeout')),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, batchWindowMs: 0, retry: fastRetry })
      try {
        const r = await client.execute({ code: 'infra' })
        assert.equal(r.status, 'infra_error')
        assert.equal(fleet.log.length, 4, 'maxAttempts attempts')
        const q = await client.execute({ code: 'q' })
        assert.equal(q.status, 'queue_timeout')
      } finally {
        await client.close()
      }
    }
  )
})

test('an infra_error that may have run is not retried, unless told: then under its request_id, to the runner that had it', async () => {
  const seen: Array<{ id: string | undefined }> = []
  await withFleet(
    (req, ctx) => {
      seen.push({ id: req.request_id })
      return ctx.attempt === 1
        ? { ...result('infra_error'), maybe_ran: true, runner: 'runner-a', request_id: req.request_id }
        : { ...result('ok', 'first run'), replayed: true, request_id: req.request_id }
    },
    async (url, fleet) => {
      const plain = new SandfleetClient({ url, batchWindowMs: 0, retry: fastRetry })
      try {
        const r = await plain.execute({ code: 'ran?' })
        assert.deepEqual([r.status, r.maybe_ran, fleet.log.length], ['infra_error', true, 1], 'not retried')
      } finally {
        await plain.close()
      }
      const told = new SandfleetClient({ url, batchWindowMs: 0, retry: fastRetry, retryMaybeRan: true })
      try {
        const r = await told.execute({ code: 'ran again?' })
        assert.deepEqual([r.status, r.replayed], ['ok', true])
        assert.deepEqual(
          fleet.log.map((e) => e.runner),
          [undefined, undefined, 'runner-a'],
          'the retry names the runner that had the call'
        )
        const [first, second] = seen.slice(1)
        assert.ok(first.id !== undefined && first.id === second.id, 'one request_id, made by the client, both times')
      } finally {
        await told.close()
      }
    }
  )
})

test("the code's own statuses and invalid_request are never retried", async () => {
  const statuses = ['error', 'timeout', 'memory', 'killed'] as const
  await withFleet(
    (req) =>
      req.code === 'bad'
        ? errorReply(400, 'invalid_request', 'SF_ERR_GATEWAY_INVALID', 'timeout_ms too large')
        : result(req.code as ExecResult['status']),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, batchWindowMs: 0, retry: fastRetry })
      try {
        for (const s of statuses) assert.equal((await client.execute({ code: s })).status, s)
        const bad = await client.execute({ code: 'bad' })
        assert.equal(bad.status, 'invalid_request')
        assert.equal(bad.error?.type, 'SF_ERR_GATEWAY_INVALID')
        assert.equal(fleet.log.length, statuses.length + 1, 'one request per call')
        assert.equal(client.stats.retries, 0)
      } finally {
        await client.close()
      }
    }
  )
})

test("retries stop at the call's deadline", async () => {
  await withFleet(
    () => errorReply(503, 'overloaded', 'SF_ERR_GATEWAY_OVERLOADED', 'busy', { 'retry-after': '0.2' }),
    async (url, fleet) => {
      const client = new SandfleetClient({
        url,
        batchWindowMs: 0,
        retry: { maxAttempts: 100, baseDelayMs: 1, maxDelayMs: 1 }
      })
      try {
        const r = await client.execute({ code: 'x' }, { deadlineMs: 500 })
        assert.equal(r.status, 'overloaded')
        assert.ok(fleet.log.length <= 4, `${fleet.log.length} attempts in a 500 ms deadline with 200 ms Retry-After`)
      } finally {
        await client.close()
      }
    }
  )
})

test('a refused connection becomes an infra_error result after retries', async () => {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  const client = new SandfleetClient({ url: `http://127.0.0.1:${port}`, batchWindowMs: 0, retry: fastRetry })
  try {
    const r = await client.execute({ code: 'print(1)' })
    assert.equal(r.status, 'infra_error')
    assert.equal(r.error?.type, 'SF_ERR_CLIENT_CONNECTION')
    assert.equal(r.maybe_ran, false, 'the connection was never made: nothing ran')
    assert.equal(client.stats.attempts, 4)
  } finally {
    await client.close()
  }
})

test('an aborted call rejects with SF_ERR_CLIENT_ABORTED', async () => {
  await withFleet(
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 300))
      return result('ok')
    },
    async (url) => {
      for (const batchWindowMs of [0, 5]) {
        const client = new SandfleetClient({ url, batchWindowMs })
        try {
          const ac = new AbortController()
          const p = client.execute({ code: 'slow' }, { signal: ac.signal })
          setTimeout(() => ac.abort(), 20)
          await assert.rejects(p, (err: unknown) => err instanceof ClientError && err.code === 'SF_ERR_CLIENT_ABORTED')
        } finally {
          await client.close()
        }
      }
    }
  )
})

test('executeBatch keeps order and re-sends only the retriable items', async () => {
  await withFleet(
    (req, ctx) =>
      req.code.startsWith('flaky') && ctx.attempt === 1
        ? { ...result('infra_error'), maybe_ran: false }
        : result(req.code === 'err' ? 'error' : 'ok', req.code),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, retry: fastRetry })
      try {
        const codes = ['a', 'flaky1', 'err', 'flaky2', 'b']
        const out = await client.executeBatch(codes.map((code) => ({ code })))
        assert.deepEqual(
          out.map((r) => r.status),
          ['ok', 'ok', 'error', 'ok', 'ok']
        )
        assert.equal(out[1].stdout, 'flaky1')
        assert.deepEqual(
          fleet.log.map((e) => e.items),
          [5, 2],
          'second round holds the two flaky items'
        )
      } finally {
        await client.close()
      }
    }
  )
})

test('streamBatch yields NDJSON lines in completion order with their index', async () => {
  const delays: Record<string, number> = { slow: 200, mid: 80, fast: 0 }
  await withFleet(
    async (req) => {
      await new Promise((resolve) => setTimeout(resolve, delays[req.code]))
      return result('ok', req.code)
    },
    async (url, fleet) => {
      const client = new SandfleetClient({ url })
      try {
        const got: Array<[number, string]> = []
        for await (const line of client.streamBatch([{ code: 'slow' }, { code: 'mid' }, { code: 'fast' }]))
          got.push([line.index, line.result.stdout])
        assert.deepEqual(got, [
          [2, 'fast'],
          [1, 'mid'],
          [0, 'slow']
        ])
        assert.equal(fleet.log[0].accept, 'application/x-ndjson')
      } finally {
        await client.close()
      }
    }
  )
})

test('streamBatch retries a retriable line and yields its final result', async () => {
  await withFleet(
    (req, ctx) => (req.code === 'flaky' && ctx.attempt === 1 ? result('overloaded') : result('ok', req.code)),
    async (url, fleet) => {
      const client = new SandfleetClient({ url, retry: fastRetry })
      try {
        const lines = []
        for await (const line of client.streamBatch([{ code: 'flaky' }, { code: 'x' }])) lines.push(line)
        assert.deepEqual(lines.map((l) => [l.index, l.result.status]).sort(), [
          [0, 'ok'],
          [1, 'ok']
        ])
        assert.equal(fleet.log.length, 2)
      } finally {
        await client.close()
      }
    }
  )
})

test('sessions keep state; a lost session throws SF_ERR_CLIENT_SESSION_LOST, one the caller closed SF_ERR_CLIENT_SESSION_CLOSED (no 410)', async () => {
  await withFleet(undefined, async (url, fleet) => {
    const client = new SandfleetClient({ url })
    try {
      const s = await client.createSession({ ttl_s: 60 })
      assert.equal((await s.execute({ code: 'x = 41' })).status, 'ok')
      assert.equal((await s.execute({ code: 'print(x + 1)' })).stdout, '42\n')
      fleet.loseSession(s.id)
      await assert.rejects(
        s.execute({ code: 'print(x)' }),
        (err: unknown) =>
          err instanceof ClientError && err.code === 'SF_ERR_CLIENT_SESSION_LOST' && err.statusCode === 410
      )
      assert.equal(s.state, 'lost')
      const t = await client.createSession()
      await t.close()
      await t.close()
      assert.deepEqual(fleet.sessions(), [])
      await assert.rejects(
        t.execute({ code: 'print(1)' }),
        (err: unknown) =>
          err instanceof ClientError &&
          err.code === 'SF_ERR_CLIENT_SESSION_CLOSED' &&
          err.statusCode !== 410 &&
          !err.message.includes('410') &&
          /closed by this program/.test(err.message)
      )
    } finally {
      await client.close()
    }
  })
})

test('a closed client refuses new calls and close is idempotent', async () => {
  const client = new SandfleetClient({ url: 'http://127.0.0.1:9' })
  await client.close()
  await client.close()
  await assert.rejects(
    client.execute({ code: '1' }),
    (err: unknown) => err instanceof ClientError && err.code === 'SF_ERR_CLIENT_CLOSED'
  )
})
