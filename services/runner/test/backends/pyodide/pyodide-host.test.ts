import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { resolveExecRequest, type ExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { PyodideDriver } from '../../../src/backends/pyodide/pyodide-driver.ts'
import { Pool } from '../../../src/pool/pool.ts'
import type { PooledJob } from '../../../src/sandbox/contract.ts'
import { hostLimits, NON_TEMPORAL_TUNABLE } from '../../../src/backends/pyodide/pyodide-host-limits.ts'

// The pyodide driver's host process: the isolates live in a child of the runner, with their own
// flags and ceiling; a crash of it is the fleet's fault, never the user's, and the pool comes back.

/** True while `pid` runs (a zombie waiting for its parent counts as gone). */
const alive = (pid: number | undefined): boolean => {
  if (pid === undefined) return false
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z'
  } catch {
    return false
  }
}

async function until(what: string, ok: () => boolean, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

function poolOf(driver: PyodideDriver, size: number): Pool {
  return new Pool({
    driver,
    language: 'python',
    runnerId: 'test',
    size,
    maxJobsPerSandbox: 0,
    maxQueuedJobs: 100,
    replaceBackoffMs: 50,
    replaceBackoffMaxMs: 500
  })
}

/** A job for `code` as a pool takes it: it may wait a minute for a sandbox. */
const job = (code: string, extra: Partial<ExecRequest> = {}): PooledJob => ({
  request: resolveExecRequest({ code, ...extra }),
  maxOutputBytes: 65536,
  startBy: performance.now() + 60_000
})

const drivers: PyodideDriver[] = []
after(async () => {
  await Promise.all(
    drivers.map(async (d) => {
      await d.close()
    })
  )
})

function newDriver(config: Parameters<typeof runnerConfig>[0] = {}): PyodideDriver {
  const d = new PyodideDriver({ config: runnerConfig({ poolSize: 2, ...config }), logger: silentLogger })
  drivers.push(d)
  return d
}

test('pyodide host: the isolates run in a child of the runner with the host flags and ceiling; the runner has none of them', async (t) => {
  process.env.SANDFLEET_TEST_SECRET = 'not for the host'
  const driver = newDriver({ maxMemoryMb: 256 })
  try {
    await driver.check()
  } finally {
    delete process.env.SANDFLEET_TEST_SECRET
  }
  const host = await driver.host()
  const environ = readFileSync(`/proc/${String(host.pid)}/environ`, 'utf8').split('\0')
  assert.equal(
    environ.some((v) => v.startsWith('SANDFLEET_')),
    false,
    "the runner's settings (API keys among them) stay out of the host's environment"
  )
  assert.ok(
    environ.some((v) => v.startsWith('GLIBC_TUNABLES=') && v.includes(NON_TEMPORAL_TUNABLE)),
    'the host copies its images with non-temporal stores'
  )
  assert.notEqual(host.pid, process.pid)
  assert.equal(
    readFileSync(`/proc/${String(host.pid)}/stat`, 'utf8')
      .split(') ')[1]
      .split(' ')[1],
    String(process.pid),
    "the host is the runner's child"
  )
  const argv = readFileSync(`/proc/${String(host.pid)}/cmdline`, 'utf8').split('\0')
  for (const flag of [
    '--no-node-snapshot',
    '--no-concurrent-recompilation',
    '--wasm-max-mem-pages=12288',
    '--max-old-space-size=1024'
  ])
    assert.ok(argv.includes(flag), `${flag} in ${argv.join(' ')}`)
  assert.equal(
    process.execArgv.some((a) => a.startsWith('--wasm-max-mem-pages')),
    false
  )
  const report = driver.describe()
  assert.match(report.boundary, /in a host process that is a child of the runner/)
  assert.ok(
    report.properties.some((p) => /each wasm memory ≤ 768 MiB \(--wasm-max-mem-pages=12288\)/.test(p)),
    report.properties.join('\n')
  )
  assert.ok(report.properties.some((p) => /crash of the host .* infra_error/.test(p)))
  if (report.properties.some((p) => p.includes('(its cgroup)'))) {
    // The ceiling: the host was born in its own memory cgroup, limited to what the report says.
    const line =
      readFileSync(`/proc/${String(host.pid)}/cgroup`, 'utf8')
        .split('\n')
        .find((l) => /:memory:|^0::/.test(l) && l.includes('pyodide-host-')) ?? ''
    const path = line.slice(line.indexOf(':/') + 1)
    const dir = /:memory:/.test(line)
      ? `/sys/fs/cgroup/memory${path}/memory.limit_in_bytes`
      : `/sys/fs/cgroup${path}/memory.max`
    assert.equal(
      Number(readFileSync(dir, 'utf8')),
      hostLimits({ maxMemoryMb: 256, sandboxMemoryMb: 0 }, 3).memoryBytes,
      line
    )
  } else t.diagnostic('no memory cgroup on this machine: the host ceiling is its flags only')
  const sandbox = driver.createSandbox('flags')
  try {
    await sandbox.start()
    // --wasm-max-mem-pages applies inside the sandbox: a wasm memory of 12,289 pages (768 MiB + 64 KiB) is refused.
    const probe = await sandbox.execute(
      job(
        "import js\nprint(js.eval(\"[16, 12289].map((n) => { try { new WebAssembly.Memory({ initial: n }); return 'made' } catch (e) { return e.constructor.name } }).join(' ')\"))"
      )
    )
    assert.deepEqual([probe.status, probe.stdout], ['ok', 'made RangeError\n'], probe.stderr)
    assert.equal(probe.retire, true, 'the probe used the JS FFI')
    const stats = sandbox.stats()
    assert.equal(stats.jobs, 1)
    assert.ok(
      (stats.memoryBytes ?? 0) > 16 * 1024 * 1024,
      `the isolate's memory as the host measured it: ${String(stats.memoryBytes)}`
    )
  } finally {
    await sandbox.close()
  }
})

test('pyodide host: kill -9 of the host answers the job in flight infra_error, and the pool comes back on a new host', async () => {
  const driver = newDriver()
  await driver.check()
  const pool = poolOf(driver, 2)
  try {
    await pool.start()
    const first = await driver.host()
    const running = pool.run(job('while True: pass', { timeout_ms: 60_000 }))
    await until('the job to be running', () => pool.stats().busy === 1)
    await sleep(200)
    process.kill(first.pid as number, 'SIGKILL')
    const crashed = await running
    assert.equal(crashed.status, 'infra_error', JSON.stringify(crashed))
    assert.equal(crashed.error?.type, 'SF_ERR_RUNNER_SANDBOX_FAILED')
    assert.match(crashed.error?.message ?? '', /pyodide host process .*exited \(signal SIGKILL\)/)
    // The idle sandbox was lost with the host too: both slots are replaced without a job asking.
    await until('both slots warm again', () => pool.stats().warm === 2 && pool.stats().replacements >= 2)
    const second = await driver.host()
    assert.notEqual(second.pid, first.pid)
    assert.equal(alive(first.pid), false)
    const results = await Promise.all([
      pool.run(job('print(1 + 1)')),
      pool.run(job('import builtins; print(hasattr(builtins, "x")); builtins.x = 1'))
    ])
    assert.deepEqual(
      results.map((r) => [r.status, r.stdout]),
      [
        ['ok', '2\n'],
        ['ok', 'False\n']
      ]
    )
  } finally {
    await pool.close()
  }
})

test("pyodide host: a host that stops answering has its job answered timeout by the pool's deadline, and is killed as the sandbox closes", async () => {
  const driver = newDriver()
  const pool = new Pool({
    driver,
    language: 'python',
    runnerId: 'test',
    size: 1,
    maxJobsPerSandbox: 0,
    maxQueuedJobs: 100,
    replaceBackoffMs: 50,
    replaceBackoffMaxMs: 500,
    graceMs: 100
  })
  try {
    await pool.start()
    const host = await driver.host()
    // Stopped before the job is sent (not after: a quick host could answer first).
    process.kill(host.pid as number, 'SIGSTOP')
    const result = await pool.run(job('print(1)', { timeout_ms: 200 }))
    assert.deepEqual([result.status, result.error?.type], ['timeout', 'Timeout'], JSON.stringify(result))
    assert.match(result.error?.message ?? '', /did not answer within timeout_ms=200/)
    await until('the stopped host to be gone', () => !alive(host.pid))
    assert.equal(host.alive, false)
    await until('a new sandbox in a new host', () => pool.stats().warm === 1)
    const after = await pool.run(job('print(2)'))
    assert.deepEqual([after.status, after.stdout], ['ok', '2\n'])
  } finally {
    await pool.close()
  }
})

test('pyodide host: close() ends the host process; a second close is a no-op', async () => {
  const driver = newDriver()
  await driver.check()
  const sandbox = driver.createSandbox('close')
  await sandbox.start()
  const host = await driver.host()
  assert.equal(alive(host.pid), true)
  await sandbox.close()
  await sandbox.close()
  await driver.close()
  await driver.close()
  assert.equal(alive(host.pid), false, 'no host process is left')
  await assert.rejects(driver.host(), /closed/)
})

test('pyodide host: a runner killed with SIGKILL leaves no host behind (the host exits when its pipe ends)', async () => {
  const driverUrl = new URL('../../../src/backends/pyodide/pyodide-driver.ts', import.meta.url).href
  const configUrl = new URL('../../../src/config.ts', import.meta.url).href
  const script = `const { PyodideDriver } = await import(${JSON.stringify(driverUrl)})
    const { runnerConfig } = await import(${JSON.stringify(configUrl)})
    const d = new PyodideDriver({ config: runnerConfig({ poolSize: 1 }), logger: { debug () {}, info () {}, warn () {}, error () {} } })
    await d.check()
    const s = d.createSandbox('orphan')
    await s.start()
    process.stdout.write(String((await d.host()).pid) + '\\n')
    setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (s: string) => {
    out += s
  })
  await until('the child runner to report its host', () => out.includes('\n'), 120_000)
  const hostPid = Number(out.trim())
  assert.equal(alive(hostPid), true)
  child.kill('SIGKILL')
  await until('the orphaned host to exit', () => !alive(hostPid), 10_000)
})

test('pyodide host: a host that cannot boot fails check() with why, and leaves no process', async () => {
  const before = new Set(
    readFileSync('/proc/self/task/' + String(process.pid) + '/children', 'utf8')
      .trim()
      .split(/\s+/)
      .filter((p) => p !== '')
  )
  const driver = newDriver({ pyodidePackages: '/nonexistent/packages.zip' })
  await assert.rejects(
    driver.check(),
    /the pyodide host process did not start: pyodidePackages: cannot read \/nonexistent\/packages\.zip/
  )
  const after = readFileSync('/proc/self/task/' + String(process.pid) + '/children', 'utf8')
    .trim()
    .split(/\s+/)
    .filter((p) => p !== '' && !before.has(p))
  assert.deepEqual(
    after.filter((p) => alive(Number(p))),
    [],
    'no host process is left'
  )
})
