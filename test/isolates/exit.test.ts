import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'

// Regression: a process whose isolates were deleted at exit hung in process.exit() (V8 waited for
// optimizing-compiler tasks Node no longer ran), about one exit in three; the drivers now set
// --no-concurrent-recompilation before their first isolate.
test('a runner process that used pyodide and javascript isolates exits with its code, every time', () => {
  const runnerUrl = new URL('../../services/runner/src/index.ts', import.meta.url).href
  const script = `const { Runner, runnerConfig } = await import(${JSON.stringify(runnerUrl)})
    const runner = new Runner(runnerConfig({ backend: 'pyodide', poolSize: 1 }))
    await runner.start()
    const r = await Promise.all([runner.execute({ code: 'print(1)' }), runner.execute({ language: 'javascript', code: 'console.log(2)' })])
    await runner.close()
    process.stdout.write(r.map((x) => x.stdout).join(''))
    process.exit(7)`
  for (let i = 0; i < 3; i++) {
    const child = spawnSync(
      process.execPath,
      ['--no-node-snapshot', '--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8', timeout: 90_000 }
    )
    assert.equal(child.signal, null, `run ${i}: the process hung at exit and was killed`)
    assert.equal(child.status, 7, child.stderr)
    assert.equal(child.stdout, '1\n2\n')
  }
})
