import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  Admission,
  CALL_MEMORY_BYTES,
  buildGatewayApp,
  defaultAdmissionBytes,
  loadGatewayConfig,
  processMemoryLimitBytes,
  type RunnerClient
} from '@sandfleet/gateway'
import { failedResult, type ExecRequest, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'
import { fakeInfo, notJudging } from '../helpers/fake-runner.ts'

/** A runner whose calls are held until `release()`. */
function heldClient(): RunnerClient & { started: number; release: () => void } {
  const load: RunnerLoad = {
    runner: 'held',
    state: 'ready',
    backend: 'process',
    languages: ['python'],
    capacity: 8,
    in_flight: 0,
    queued: 0,
    queue_limit: 100,
    warm: 8,
    busy: 0,
    sessions: 0
  }
  let open: () => void = () => {}
  let gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const answer = (r: ExecRequest): ExecResult => ({
    ...failedResult('ok', 'x', ''),
    error: null,
    exit_code: 0,
    stdout: r.code,
    runner: 'held',
    sandbox: 's'
  })
  const c = {
    name: 'held',
    started: 0,
    release: () => {
      open()
      gate = Promise.resolve()
    },
    async execute(r: ExecRequest) {
      c.started++
      await gate
      return answer(r)
    },
    async executeBatch(rs: ExecRequest[], on?: (i: number, r: ExecResult) => void) {
      c.started += rs.length
      await gate
      return rs.map((r, i) => {
        const out = answer(r)
        on?.(i, out)
        return out
      })
    },
    ...notJudging('held'),
    async load() {
      return load
    },
    async info() {
      return fakeInfo(load)
    },
    async close() {}
  }
  return c
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((resolve) => setTimeout(resolve, 5))
}

test('past maxInFlight a call is answered 429 with Retry-After and is not sent to a runner; freed slots admit again', async () => {
  const client = heldClient()
  const { app, admission } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { maxInFlight: 3, retryAfterS: 2 } }),
    clients: [client],
    logger: false
  })
  try {
    await app.ready()
    const held = [
      app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'a' } }),
      app.inject({ method: 'POST', url: '/v1/execute/batch', payload: { requests: [{ code: 'b' }, { code: 'c' }] } })
    ]
    await until(() => client.started === 3)
    assert.equal(admission.inFlight, 3)

    const refused = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'd' } })
    assert.equal(refused.statusCode, 429)
    assert.equal(refused.headers['retry-after'], '2')
    assert.equal(refused.json().status, 'overloaded')
    assert.equal(refused.json().error.code, 'SF_ERR_GATEWAY_OVERLOADED')
    const refusedBatch = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      payload: { requests: [{ code: 'e' }] }
    })
    assert.equal(refusedBatch.statusCode, 429)
    // the compatible APIs' calls take the same path: a 429 in each API's own shape
    const refusedCompat = await app.inject({
      method: 'POST',
      url: '/run_code',
      payload: { code: 'x', language: 'python' }
    })
    assert.deepEqual([refusedCompat.statusCode, refusedCompat.headers['retry-after']], [429, '2'])
    assert.match(refusedCompat.json().detail, /the gateway holds 3 calls/)
    const refusedMcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_python', arguments: { code: 'x' } } }
    })
    assert.deepEqual([refusedMcp.statusCode, refusedMcp.json().error.code], [429, 'SF_ERR_GATEWAY_OVERLOADED'])
    assert.equal(client.started, 3, 'refused calls never reached the runner')

    client.release()
    const [one, batch] = await Promise.all(held)
    assert.equal(one.json().stdout, 'a')
    assert.deepEqual(
      batch.json().results.map((r: ExecResult) => r.stdout),
      ['b', 'c']
    )
    await until(() => admission.inFlight === 0)
    const again = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'f' } })
    assert.equal(again.statusCode, 200)
    assert.equal(again.json().stdout, 'f')

    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    assert.match(metrics.body, /sandfleet_gateway_/)
  } finally {
    await app.close()
  }
})

test('a batch heavier than the whole limit is still admitted when nothing else is in flight (it cannot starve)', async () => {
  const client = heldClient()
  client.release()
  const { app } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { maxInFlight: 2 } }),
    clients: [client],
    logger: false
  })
  try {
    await app.ready()
    const r = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      payload: { requests: [{ code: '1' }, { code: '2' }, { code: '3' }] }
    })
    assert.equal(r.statusCode, 200)
    assert.equal(r.json().results.length, 3)
  } finally {
    await app.close()
  }
})

test('limits from the configuration explain themselves: code size and batch size 400s naming the field, body size a 413 giving the limit; auth is a 401', async () => {
  const client = heldClient()
  client.release()
  const config = loadGatewayConfig({
    env: {},
    values: { maxCodeBytes: 10, maxBodyBytes: 2048, maxBatchItems: 2, apiKeys: ['secret-key-1'] }
  })
  const { app } = await buildGatewayApp({ config, clients: [client], logger: false })
  const auth = { authorization: 'Bearer secret-key-1' }
  try {
    await app.ready()
    const noKey = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'x' } })
    assert.equal(noKey.statusCode, 401)
    assert.equal(noKey.json().error.code, 'SF_ERR_GATEWAY_UNAUTHORIZED')
    const wrongKey = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: { authorization: 'Bearer nope-nope-nope' },
      payload: { code: 'x' }
    })
    assert.equal(wrongKey.statusCode, 401)
    const viaHeader = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: { 'x-api-key': 'secret-key-1' },
      payload: { code: 'x' }
    })
    assert.equal(viaHeader.statusCode, 200)

    const longCode = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: auth,
      payload: { code: 'x'.repeat(11) }
    })
    assert.equal(longCode.statusCode, 400)
    assert.deepEqual(longCode.json().error, {
      code: 'SF_ERR_GATEWAY_INVALID_REQUEST',
      field: 'code',
      message: "code is 11 bytes, over this deployment's limit of 10 bytes (maxCodeBytes, --max-code-bytes)"
    })
    const longInBatch = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      headers: auth,
      payload: { requests: [{ code: '1' }, { code: 'x'.repeat(11) }] }
    })
    assert.deepEqual([longInBatch.statusCode, longInBatch.json().error.field], [400, 'requests/1/code'])
    assert.match(
      longInBatch.json().error.message,
      /^code is 11 bytes, over this deployment's limit of 10 bytes \(maxCodeBytes, --max-code-bytes\)$/
    )
    const bigBody = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: auth,
      payload: { code: 'x', stdin: 'y'.repeat(4096) }
    })
    assert.equal(bigBody.statusCode, 413)
    assert.deepEqual(bigBody.json(), {
      status: 'invalid_request',
      error: {
        code: 'SF_ERR_GATEWAY_BODY_TOO_LARGE',
        message: "request body is larger than 2048 bytes, this gateway's maxBodyBytes (--max-body-bytes)"
      }
    })
    const bigBatch = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      headers: auth,
      payload: { requests: [{ code: '1' }, { code: '2' }, { code: '3' }] }
    })
    assert.equal(bigBatch.statusCode, 400)
    assert.equal(bigBatch.json().error.field, 'requests')
    const notJson = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'print(1)'
    })
    assert.equal(notJson.statusCode, 415)
    assert.equal(client.started, 1, 'only the one valid call reached the runner')
  } finally {
    await app.close()
  }
})

test('admission is bounded by memory: calls weigh 32 KiB plus their body, and past the budget a call is answered 429; with no count set the bound is the budget over 32 KiB', async () => {
  const client = heldClient()
  const { app, admission } = await buildGatewayApp({
    config: loadGatewayConfig({ env: {}, values: { admissionMemoryMb: 1 } }),
    clients: [client],
    logger: false
  })
  try {
    assert.equal(admission.limit, 32, '1 MiB holds 32 calls of 32 KiB')
    assert.equal(admission.memoryBytes, 2 ** 20)
    await app.ready()
    // One call whose body is ~600 KiB leaves room for fewer calls than the count alone would.
    const big = app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'x'.repeat(600 * 1024) } })
    await until(() => client.started === 1)
    const held = Array.from({ length: 8 }, (_, i) =>
      app.inject({ method: 'POST', url: '/v1/execute', payload: { code: String(i) } })
    )
    await until(() => client.started === 9)
    const refused = await app.inject({
      method: 'POST',
      url: '/v1/execute/batch',
      payload: { requests: Array.from({ length: 8 }, () => ({ code: 'y' })) }
    })
    assert.equal(refused.statusCode, 429, 'a batch of 8 more calls (256 KiB) passes the 1 MiB budget')
    assert.equal(refused.json().status, 'overloaded')
    assert.match(refused.json().error.message, /limits 32 calls, 1 MiB/)
    assert.ok(admission.inFlight === 9 && admission.inFlight < admission.limit, 'refused on memory, below the count')
    client.release()
    await Promise.all([big, ...held])
    await until(() => admission.inFlight === 0 && admission.bytes === 0)
  } finally {
    await app.close()
  }
})

test('the default admission bound is sized by memory, tens of thousands of calls on a machine of a few GiB, not a small count', () => {
  const config = loadGatewayConfig({ env: {} })
  assert.equal(config.maxInFlight, 0)
  assert.equal(config.admissionMemoryMb, 0)
  const admission = new Admission(config.maxInFlight)
  assert.equal(admission.memoryBytes, defaultAdmissionBytes())
  assert.ok(admission.memoryBytes <= processMemoryLimitBytes() / 4 + 1)
  assert.equal(admission.limit, Math.floor(admission.memoryBytes / CALL_MEMORY_BYTES))
  assert.ok(new Admission(4096).limit === 4096, 'an explicit maxInFlight still bounds the count')
})
