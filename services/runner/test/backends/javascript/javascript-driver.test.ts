import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { resolveExecRequest, type ExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { JavascriptDriver } from '../../../src/backends/javascript/javascript-driver.ts'
import type { RunOutcome, Sandbox } from '../../../src/sandbox/contract.ts'
import { nodeSnapshotDisabled, setIsolateFlags } from '../../../src/kits/isolate/node-flags.ts'
import { Runner } from '../../../src/runner/runner.ts'

async function withSandbox(
  fn: (
    run: (code: string, extra?: Partial<ExecRequest>, maxOutputBytes?: number) => Promise<RunOutcome>,
    sandbox: Sandbox
  ) => Promise<void>
): Promise<void> {
  const driver = new JavascriptDriver({ config: runnerConfig({}), logger: silentLogger })
  await driver.check()
  const sandbox = driver.createSandbox('javascript-test')
  try {
    await sandbox.start()
    const run = async (code: string, extra: Partial<ExecRequest> = {}, maxOutputBytes = 65536): Promise<RunOutcome> =>
      await sandbox.execute({ request: resolveExecRequest({ code, language: 'javascript', ...extra }), maxOutputBytes })
    await fn(run, sandbox)
  } finally {
    await sandbox.close()
    await driver.close()
  }
}

test('javascript: the test process runs with --no-node-snapshot (run-tests passes it to every test file)', () => {
  assert.equal(nodeSnapshotDisabled(), true)
})

test('javascript: ok with console.log/error captured, stdin and files in and out', async () => {
  await withSandbox(async (run) => {
    const ok = await run(
      'console.log("a", 1, [1, 2], {x: "y"}); console.error("e"); console.log(sandfleet.stdin.toUpperCase())',
      { stdin: 'abc' }
    )
    assert.equal(ok.status, 'ok')
    assert.equal(ok.exit_code, 0)
    assert.equal(ok.stdout, 'a 1 [ 1, 2 ] { x: "y" }\nABC\n')
    assert.equal(ok.stderr, 'e\n')
    assert.deepEqual(ok.truncated, { stdout: false, stderr: false })
    const files = await run(
      'console.log(sandfleet.readFile("in.txt")); sandfleet.writeFile("out.txt", "ret ✓"); sandfleet.writeFile("bin", new Uint8Array([0, 255]))',
      { files: { 'in.txt': Buffer.from('given ✓').toString('base64') }, fetch_files: ['out.txt', 'bin', 'missing'] }
    )
    assert.equal(files.status, 'ok')
    assert.equal(files.stdout, 'given ✓\n')
    assert.equal(Buffer.from(files.files['out.txt'] ?? '', 'base64').toString(), 'ret ✓')
    assert.deepEqual([...Buffer.from(files.files.bin ?? '', 'base64')], [0, 255])
    assert.equal('missing' in files.files, false)
    const later = await run('(async () => { await null; console.log("after await") })()')
    assert.equal(later.stdout, 'after await\n')
    const none = await run('console.log(JSON.stringify(sandfleet.listFiles()))')
    assert.deepEqual([none.status, none.stdout], ['ok', '[]\n'])
  })
})

test('javascript: an uncaught exception is error with type, message and stack; a syntax error too', async () => {
  await withSandbox(async (run) => {
    const e = await run('function f () { throw new TypeError("bad thing") }\nconsole.log("before")\nf()')
    assert.equal(e.status, 'error')
    assert.equal(e.exit_code, 1)
    assert.equal(e.stdout, 'before\n')
    assert.equal(e.error?.type, 'TypeError')
    assert.equal(e.error?.message, 'bad thing')
    assert.match(e.error?.traceback ?? '', /at f \(main\.js:1:/)
    assert.match(e.stderr, /Uncaught TypeError: bad thing/)
    const s = await run('let = = 1')
    assert.equal(s.status, 'error')
    assert.equal(s.error?.type, 'SyntaxError')
    const thrown = await run('throw 42')
    assert.deepEqual([thrown.status, thrown.error?.message], ['error', '42'])
    const rejected = await run('Promise.reject(new RangeError("no"))')
    assert.deepEqual([rejected.status, rejected.error?.type], ['error', 'RangeError'])
  })
})

test('javascript: no state leaks between jobs (fresh context each job)', async () => {
  await withSandbox(async (run) => {
    const first = await run(
      'globalThis.leak = 1; Object.prototype.polluted = true; Array.prototype.push = null; console.log = null; var v = 2'
    )
    assert.equal(first.status, 'ok')
    const second = await run('console.log(typeof leak, typeof v, ({}).polluted, typeof [].push)')
    assert.equal(second.status, 'ok')
    assert.equal(second.stdout, 'undefined undefined undefined function\n')
    // A job that returns a promise is answered in a second call; the one after it is fresh too.
    const asyncFirst = await run('(async () => { await null; globalThis.later = 1; Promise.resolve = null })()')
    assert.equal(asyncFirst.status, 'ok')
    const afterAsync = await run('console.log(typeof later, typeof Promise.resolve)')
    assert.equal(afterAsync.stdout, 'undefined function\n')
  })
})

test('javascript: nothing of the host is reachable (require, process, import(), constructor tricks)', async () => {
  await withSandbox(async (run) => {
    const probe = await run(`
      const seen = []
      for (const name of ['require', 'process', 'module', 'Buffer', 'fetch', 'setTimeout', 'global', '__dirname', 'WebAssembly']) seen.push(name + '=' + typeof globalThis[name])
      const g = (function () { return this })() ?? Function('return this')()
      seen.push('proc=' + typeof g.process)
      seen.push('ctor=' + ({}).constructor.constructor('return typeof process')())
      console.log(seen.join(' '))
      import('node:fs').then(() => console.log('import ok'), (e) => console.log('import failed'))`)
    assert.equal(probe.status, 'ok', probe.stderr)
    assert.match(
      probe.stdout,
      /require=undefined process=undefined module=undefined Buffer=undefined fetch=undefined setTimeout=undefined global=undefined __dirname=undefined WebAssembly=undefined/
    )
    assert.match(probe.stdout, /proc=undefined ctor=undefined/)
    assert.doesNotMatch(probe.stdout, /import ok/)
  })
})

test('javascript: output over the cap is cut and marked truncated', async () => {
  await withSandbox(async (run) => {
    const big = await run('for (let i = 0; i < 100000; i++) console.log("0123456789"); console.error("e")', {}, 1000)
    assert.equal(big.status, 'ok')
    assert.equal(Buffer.byteLength(big.stdout), 1000)
    assert.deepEqual(big.truncated, { stdout: true, stderr: false })
    const utf = await run('console.log("é".repeat(1000))', {}, 7)
    assert.equal(utf.stdout, 'ééé')
    assert.equal(utf.truncated.stdout, true)
  })
})

test('javascript: hostile code (infinite loop, huge allocation, deep recursion) gives timeout/memory/error and never crashes the runner', async () => {
  await withSandbox(async (run, sandbox) => {
    const loop = await run('console.log("started"); while (true) {}', { timeout_ms: 200 })
    assert.deepEqual([loop.status, loop.retire], ['timeout', undefined])
    assert.equal(loop.stdout, 'started\n', 'output written before the timeout is kept')
    assert.ok((loop.cpu_ms ?? 0) > 0, `the isolate's CPU over the job: ${loop.cpu_ms}`)
    assert.equal(sandbox.state, 'ready', 'a timeout costs the job, not the isolate')
    const after = await run('console.log(typeof globalThis.keep, 6 * 7)', { timeout_ms: 1000 })
    assert.deepEqual([after.status, after.stdout], ['ok', 'undefined 42\n'])
  })
  await withSandbox(async (run) => {
    const alloc = await run('const keep = []; while (true) keep.push(new Array(100000).fill(1.5))', {
      memory_mb: 64,
      timeout_ms: 30_000
    })
    assert.equal(alloc.status, 'memory')
    assert.deepEqual(
      [alloc.retire, alloc.retire_reason],
      [true, 'oom'],
      'isolated-vm disposed the isolate at its heap limit'
    )
  })
  await withSandbox(async (run, sandbox) => {
    const buffers = await run(
      'const keep = []; for (let i = 0; i < 1000; i++) keep.push(new Uint8Array(16 * 1024 * 1024)); console.log(keep.length)',
      { memory_mb: 64, timeout_ms: 30_000 }
    )
    assert.deepEqual([buffers.status, buffers.retire], ['memory', undefined], JSON.stringify(buffers.error))
    assert.equal(sandbox.state, 'ready', 'a refused allocation leaves the isolate serving')
    const after = await run('console.log(typeof keep)', { memory_mb: 64 })
    assert.deepEqual([after.status, after.stdout], ['ok', 'undefined\n'])
  })
  await withSandbox(async (run) => {
    const deep = await run('function f (n) { return f(n + 1) + 1 } f(0)')
    assert.equal(deep.status, 'error')
    assert.equal(deep.error?.type, 'RangeError')
    const still = await run('console.log(6 * 7)')
    assert.deepEqual([still.status, still.stdout], ['ok', '42\n'])
    const never = await run('new Promise(() => {})', { timeout_ms: 100 })
    assert.equal(never.status, 'timeout')
  })
  await withSandbox(async (run) => {
    // Ends ok holding all of its 16 MiB: the next job's context no longer fits in that isolate.
    const full = await run(
      'for (let kb = 16384; kb > 0; kb -= 16) { try { globalThis.keep = new Uint8Array(kb * 1024); break } catch {} } console.log(keep.length > 0)',
      { memory_mb: 16 }
    )
    assert.deepEqual([full.status, full.stdout], ['ok', 'true\n'])
    const after = await run('console.log(typeof keep)', { memory_mb: 16 })
    assert.deepEqual([after.status, after.stdout], ['ok', 'undefined\n'], 'the next job runs, in a new isolate')
  })
  await withSandbox(async (run, sandbox) => {
    const spin = await run('(async () => { await null; console.log("awaited"); while (true) {} })()', {
      timeout_ms: 200
    })
    assert.deepEqual([spin.status, spin.retire], ['timeout', undefined])
    // Microtasks without end: V8 drops what is still queued when the call is terminated, so none
    // of them runs in the next job's call (which would then time out too).
    const chain = await run(
      'Promise.resolve().then(function again () { return Promise.resolve().then(again) }); "queued"',
      { timeout_ms: 200 }
    )
    assert.deepEqual([chain.status, chain.retire], ['timeout', undefined])
    const waits = await run('(async () => { while (true) await null })(); "queued"', { timeout_ms: 200 })
    assert.deepEqual([waits.status, waits.retire], ['timeout', undefined])
    const after = await run('console.log("clean")', { timeout_ms: 2000 })
    assert.deepEqual([after.status, after.stdout], ['ok', 'clean\n'], 'nothing of the jobs before runs in this one')
    assert.equal(sandbox.state, 'ready')
  })
})

test('javascript: a runner keeps no more isolates than isolated-vm has threads (cores + 1), whatever the pool size', async () => {
  const runner = new Runner(
    runnerConfig({ languages: ['javascript'], poolSize: availableParallelism() + 3, maxSessions: 0 }),
    { logger: silentLogger }
  )
  try {
    await runner.start()
    assert.equal(runner.load().capacity, availableParallelism() + 1)
    const results = await Promise.all(
      Array.from(
        { length: 8 },
        async (_, i) => await runner.execute({ language: 'javascript', code: `console.log(${i} * 2)` })
      )
    )
    assert.deepEqual(
      results.map((r) => r.stdout),
      Array.from({ length: 8 }, (_, i) => `${i * 2}\n`)
    )
  } finally {
    await runner.close()
  }
})

test('javascript: contexts are made without WebAssembly; a driver that wants it (pyodide) gets it back in the contexts made after', async () => {
  const driver = new JavascriptDriver({ config: runnerConfig({}), logger: silentLogger })
  await driver.check()
  const ivm = (await import('isolated-vm')).default
  const probe = async (): Promise<unknown> => {
    const isolate = new ivm.Isolate({ memoryLimit: 32 })
    try {
      return await (await isolate.createContext()).eval('typeof WebAssembly')
    } finally {
      isolate.dispose()
    }
  }
  assert.equal(await probe(), 'undefined', 'V8 built no WebAssembly object in a new context')
  setIsolateFlags() // what the pyodide driver's check() does
  assert.equal(await probe(), 'object')
  await driver.check()
  assert.equal(await probe(), 'object', 'once wanted, it stays')
  const sandbox = driver.createSandbox('javascript-wasm-back')
  try {
    await sandbox.start()
    const job = await sandbox.execute({
      request: resolveExecRequest({ language: 'javascript', code: 'console.log(typeof WebAssembly)' }),
      maxOutputBytes: 1024
    })
    assert.equal(job.stdout, 'undefined\n', 'the harness still takes it away from the code')
  } finally {
    await sandbox.close()
    await driver.close()
  }
})

test('javascript: without --no-node-snapshot check() refuses with how to fix it, and creates no isolate', () => {
  const driverUrl = new URL('../../../src/backends/javascript/javascript-driver.ts', import.meta.url).href
  const configUrl = new URL('../../../src/config.ts', import.meta.url).href
  const script = `const { JavascriptDriver } = await import(${JSON.stringify(driverUrl)}); const { runnerConfig } = await import(${JSON.stringify(configUrl)});
    try { await new JavascriptDriver({ config: runnerConfig({}), logger: console }).check(); console.log('passed') } catch (e) { console.log('refused: ' + e.message) }`
  const env = { ...process.env, NODE_OPTIONS: '' }
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env,
    encoding: 'utf8'
  })
  assert.equal(child.status, 0, child.stderr)
  assert.match(child.stdout, /^refused: .*--no-node-snapshot/)
})
