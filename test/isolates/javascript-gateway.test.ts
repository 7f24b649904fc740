import { test } from 'node:test'
import assert from 'node:assert/strict'
import { InProcessRunnerClient, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { Runner, runnerConfig } from '@sandfleet/runner'

test('javascript through the gateway over HTTP: 200 mixed jobs (ok, error, timeout, memory) leave a healthy pool; only heaps that ran out cost an isolate', async () => {
  const runner = new Runner(runnerConfig({ languages: ['javascript'], poolSize: 2 }))
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined
  try {
    await runner.start()
    gateway = await startGateway({
      config: loadGatewayConfig({ values: { host: '127.0.0.1', port: 0 } }),
      clients: [new InProcessRunnerClient(runner)],
      registries: [runner.registry]
    })
    const url = gateway.url
    const post = async (body: object): Promise<any> => {
      const res = await fetch(`${url}/v1/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body)
      })
      return await res.json()
    }
    const one = await post({ language: 'javascript', code: 'console.log(1 + 1)' })
    assert.deepEqual([one.status, one.stdout, one.exit_code], ['ok', '2\n', 0])
    const kinds = (i: number): object =>
      [
        { code: `console.log(${i} * 2)` },
        { code: 'throw new Error("bad")' },
        { code: 'console.log(sandfleet.stdin.toUpperCase())', stdin: 'abc' },
        { code: 'while (true) {}', timeout_ms: 50 },
        { code: 'const a = []; while (true) a.push(new Array(1e5).fill(0.5))', memory_mb: 32 }
      ][i % 5]
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => await post({ language: 'javascript', ...kinds(i) }))
    )
    results.forEach((r, i) => {
      if (i % 5 === 0) assert.deepEqual([r.status, r.stdout], ['ok', `${i * 2}\n`])
      if (i % 5 === 1) assert.deepEqual([r.status, r.error?.type, r.error?.message], ['error', 'Error', 'bad'])
      if (i % 5 === 2) assert.deepEqual([r.status, r.stdout], ['ok', 'ABC\n'])
      if (i % 5 === 3) assert.equal(r.status, 'timeout')
      if (i % 5 === 4) assert.equal(r.status, 'memory')
    })
    while (runner.poolStats()[0].warm < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    const stats = runner.poolStats()[0]
    // A timeout costs the job (isolated-vm's timeout leaves the isolate usable); an isolate whose heap ran out is
    // replaced.
    assert.ok(
      stats.replacements <= 40,
      `none of the 40 isolates that timed out was replaced, at most the 40 whose heap ran out (${stats.replacements})`
    )
    const after = await Promise.all([
      post({ language: 'javascript', code: 'console.log("ok")' }),
      post({ language: 'javascript', code: 'console.log(typeof leak)' })
    ])
    assert.deepEqual(
      after.map((r) => [r.status, r.stdout]),
      [
        ['ok', 'ok\n'],
        ['ok', 'undefined\n']
      ]
    )
  } finally {
    await gateway?.close()
    await runner.close()
  }
})
