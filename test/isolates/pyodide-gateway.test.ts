import { test } from 'node:test'
import assert from 'node:assert/strict'
import { InProcessRunnerClient, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { Runner, runnerConfig } from '@sandfleet/runner'

test('pyodide through the gateway over HTTP: 200 mixed jobs (ok, error, stdin, leak probe, timeouts) leave a healthy pool', async () => {
  const runner = new Runner(runnerConfig({ backend: 'pyodide', languages: ['python'], poolSize: 2 }))
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined
  try {
    await runner.start()
    assert.equal(runner.isolation().driver, 'pyodide')
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
    const one = await post({ code: 'print(1 + 1)' })
    assert.deepEqual([one.status, one.stdout, one.exit_code], ['ok', '2\n', 0])
    const kinds = (i: number): object =>
      [
        { code: `print(${i} * 2)` },
        { code: 'raise ValueError("bad")' },
        { code: 'import sys; print(sys.stdin.read().upper())', stdin: 'abc' },
        {
          code: 'import builtins, json\nprint(hasattr(builtins, "mark"), json.dumps.__name__)\nbuiltins.mark = 1\njson.dumps = len'
        },
        { code: 'while True: pass', timeout_ms: 100 },
        { code: 'while True:\n    try:\n        while True: pass\n    except BaseException: pass', timeout_ms: 100 }
      ][i % 20 === 19 ? 5 : i % 5]
    const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => await post(kinds(i))))
    results.forEach((r, i) => {
      if (i % 20 === 19) {
        assert.equal(r.status, 'timeout')
        return
      }
      if (i % 5 === 0) assert.deepEqual([r.status, r.stdout], ['ok', `${i * 2}\n`])
      if (i % 5 === 1) assert.deepEqual([r.status, r.error?.type], ['error', 'ValueError'])
      if (i % 5 === 2) assert.deepEqual([r.status, r.stdout], ['ok', 'ABC\n'])
      if (i % 5 === 3)
        assert.deepEqual([r.status, r.stdout], ['ok', 'False dumps\n'], "no job sees the previous job's patches")
      if (i % 5 === 4) assert.equal(r.status, 'timeout')
    })
    while (runner.poolStats()[0].warm < 2) await new Promise((resolve) => setTimeout(resolve, 20))
    const stats = runner.poolStats()[0]
    assert.ok(stats.replacements >= 10, `every isolate stopped hard was replaced (${stats.replacements})`)
    const after = await Promise.all([
      post({ code: 'print("ok")' }),
      post({ code: 'import builtins; print(hasattr(builtins, "mark"))' })
    ])
    assert.deepEqual(
      after.map((r) => [r.status, r.stdout]),
      [
        ['ok', 'ok\n'],
        ['ok', 'False\n']
      ]
    )
  } finally {
    await gateway?.close()
    await runner.close()
  }
})
