import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { runWrk, wrkAvailable } from '../src/wrk.ts'

/** A stand-in fleet on 127.0.0.1 whose answers cycle through `bodies` (status, body). */
async function fakeFleet(answers: Array<[number, unknown]>): Promise<{ url: string; server: Server }> {
  let i = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const [status, body] = answers[i++ % answers.length]
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

const ok = (stdout: string): Record<string, unknown> => ({
  status: 'ok',
  stdout,
  stderr: '',
  exit_code: 0,
  duration_ms: 1.5,
  queue_ms: 0.25,
  error: null
})

test("wrk is installed (.ci/run installs it): the harness's default load generator", () => {
  assert.equal(wrkAvailable(), true)
})

test('wrk counts every call by outcome: ok, wrong_output, the result status, http_NNN; a stdout that only looks right inside another string is not taken', async () => {
  const { url, server } = await fakeFleet([
    [200, ok('2\n')],
    [200, ok('3\n')],
    [200, { ...ok(''), status: 'error', stderr: '"stdout":"2\\n"' }],
    [500, { code: 'SF_ERR_X', message: 'boom' }],
    [200, ok('"stdout":"2\\n"')]
  ])
  try {
    const r = await runWrk(
      { url, path: '/v1/execute', body: '{"code":"print(1+1)"}', callsPerRequest: 1, kind: 'execute', stdout: '2\n' },
      { concurrency: 1, durationS: 1, warmupS: 0 }
    )
    assert.ok(r.requests >= 10, `${r.requests} requests`)
    assert.equal(r.calls, r.requests)
    const c = r.counts
    assert.deepEqual(Object.keys(c).sort(), ['error', 'http_500', 'ok', 'wrong_output'])
    // one ok in five answers is the right one; the last answer's stdout only contains the text, escaped
    assert.ok(Math.abs(c.ok * 5 - r.calls) <= 5 && Math.abs(c.wrong_output * 5 - 2 * r.calls) <= 10, JSON.stringify(c))
    assert.equal(r.failures, r.calls - r.okCalls)
    assert.equal(r.runMs.p50, 1.5)
    assert.ok(r.latencyMs.p50 > 0 && r.latencyMs.p99 >= r.latencyMs.p50)
    assert.ok(r.cpu !== undefined && r.cpu.harnessPct >= 0)
  } finally {
    server.close()
  }
})

test('wrk in batch mode counts each item, and missing ones', async () => {
  const { url, server } = await fakeFleet([
    [200, { results: [ok('2\n'), { ...ok(''), status: 'timeout' }, ok('2\n')] }],
    [200, { results: [ok('2\n')] }]
  ])
  try {
    const r = await runWrk(
      { url, path: '/v1/execute/batch', body: '{"requests":[]}', callsPerRequest: 3, kind: 'batch', stdout: '2\n' },
      { concurrency: 1, durationS: 1, warmupS: 0 }
    )
    assert.equal(r.calls, 3 * r.requests)
    assert.ok(Math.abs(r.counts.ok - 1.5 * r.requests) <= 2, JSON.stringify(r.counts))
    assert.ok(Math.abs(r.counts.missing_result - r.requests) <= 2, JSON.stringify(r.counts))
    assert.ok(r.counts.timeout > 0)
  } finally {
    server.close()
  }
})
