import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { classifyBatch, classifyExecute, classifyNdjsonBatch, runLoad } from '../src/load.ts'

test('classifiers turn responses into one outcome per call; a wrong stdout is a failure, not an ok', () => {
  const one = classifyExecute('2\n')
  assert.deepEqual(one(200, '{"status":"ok","stdout":"2\\n"}'), ['ok'])
  assert.deepEqual(one(200, '{"status":"ok","stdout":"3\\n"}'), ['wrong_output'])
  assert.deepEqual(one(200, '{"status":"timeout","stdout":""}'), ['timeout'])
  assert.deepEqual(one(429, '{"status":"overloaded"}'), ['http_429'])
  assert.deepEqual(one(200, 'not json'), ['bad_response'])
  const batch = classifyBatch(3, '2\n')
  assert.deepEqual(batch(200, '{"results":[{"status":"ok","stdout":"2\\n"},{"status":"error","stdout":""}]}'), [
    'ok',
    'error',
    'missing_result'
  ])
  assert.deepEqual(batch(503, ''), ['http_503', 'http_503', 'http_503'])
})

test('a streamed batch is classified per item in request order from its {index, result} lines; a gap is missing_result, a bad or repeated index bad_response', () => {
  const nd = classifyNdjsonBatch(3, '2\n')
  const line = (index: number, status: string, stdout = '2\n'): string =>
    JSON.stringify({ index, result: { status, stdout, duration_ms: 1, queue_ms: 2, cpu_ms: 0.5 } })
  const times = { runMs: [] as number[], queueMs: [] as number[], cpuMs: [] as number[] }
  assert.deepEqual(nd(200, [line(2, 'ok'), line(0, 'ok', '3\n')].join('\n') + '\n', times), [
    'wrong_output',
    'missing_result',
    'ok'
  ])
  assert.deepEqual(
    times,
    { runMs: [1, 1], queueMs: [2, 2], cpuMs: [0.5, 0.5] },
    "each result's own times, its CPU among them"
  )
  assert.deepEqual(nd(200, [line(0, 'ok'), line(0, 'ok')].join('\n')), ['bad_response', 'bad_response', 'bad_response'])
  assert.deepEqual(nd(200, line(3, 'ok')), ['bad_response', 'bad_response', 'bad_response'])
  assert.deepEqual(nd(429, ''), ['http_429', 'http_429', 'http_429'])
})

test("a target's accept header is sent with every request", async () => {
  const accepts = new Set<string | undefined>()
  const server = createServer((req, res) => {
    accepts.add(req.headers.accept)
    req.resume()
    req.on('end', () => {
      res
        .writeHead(200, { 'content-type': 'application/x-ndjson' })
        .end(JSON.stringify({ index: 0, result: { status: 'ok', stdout: '2\n' } }) + '\n')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = server.address() as AddressInfo
    const report = await runLoad(
      {
        url: `http://127.0.0.1:${port}`,
        path: '/v1/execute/batch',
        body: '{}',
        accept: 'application/x-ndjson',
        callsPerRequest: 1,
        classify: classifyNdjsonBatch(1, '2\n')
      },
      { concurrency: 2, durationS: 0.2, warmupS: 0 }
    )
    assert.ok(report.okCalls > 0 && report.failures === 0, JSON.stringify(report.counts))
    assert.deepEqual([...accepts], ['application/x-ndjson'])
  } finally {
    server.close()
    server.closeAllConnections()
  }
})

test('the closed loop counts every completed call by outcome and reports the non-ok ones as failures', async () => {
  let n = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const i = n++
      if (i % 5 === 4) {
        res.writeHead(500).end('{}')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ status: i % 5 === 3 ? 'error' : 'ok', stdout: '2\n', duration_ms: 3, queue_ms: i % 2 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = server.address() as AddressInfo
    const report = await runLoad(
      {
        url: `http://127.0.0.1:${port}`,
        path: '/v1/execute',
        body: '{}',
        callsPerRequest: 1,
        classify: classifyExecute('2\n')
      },
      { concurrency: 4, durationS: 0.3, warmupS: 0.05 }
    )
    assert.ok(report.calls > 10, `only ${report.calls} calls completed`)
    assert.equal(report.requests, report.calls)
    assert.equal(report.latencyMs.n, report.requests)
    assert.deepEqual(Object.keys(report.counts).sort(), ['error', 'http_500', 'ok'])
    assert.equal(report.counts.ok + report.counts.error + report.counts.http_500, report.calls)
    assert.equal(report.okCalls, report.counts.ok)
    assert.equal(report.failures, report.calls - report.okCalls)
    assert.equal(report.okCallsPerS, report.okCalls / 0.3)
    assert.equal(report.runMs.n, report.calls - report.counts.http_500, 'every JSON result gives its duration_ms')
    assert.equal(report.runMs.p50, 3)
    assert.deepEqual([report.queueMs.min, report.queueMs.max], [0, 1])
    assert.ok(
      report.latencyMs.p50 <= report.latencyMs.p90 &&
        report.latencyMs.p90 <= report.latencyMs.p99 &&
        report.latencyMs.p99 <= report.latencyMs.max
    )
  } finally {
    server.close()
    server.closeAllConnections()
  }
})

test('a refused connection is counted as a transport failure, not lost', async () => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  const report = await runLoad(
    {
      url: `http://127.0.0.1:${port}`,
      path: '/v1/execute',
      body: '{}',
      callsPerRequest: 2,
      classify: classifyBatch(2)
    },
    { concurrency: 1, durationS: 0.1, warmupS: 0 }
  )
  assert.ok(report.calls > 0)
  assert.equal(report.okCalls, 0)
  assert.equal(report.failures, report.calls)
  assert.deepEqual(Object.keys(report.counts), ['transport_ECONNREFUSED'])
})
