import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { Runner } from '../../../src/runner.ts'
import { runnerConfig } from '../../../src/config.ts'
import { CgroupHost } from '../../../src/backends/process/cgroups.ts'

// These tests need the host's cgroups (CI runs as root on a cgroup v1 machine); a host
// without them is reported by the driver, and the first test says so instead of passing.
const host = CgroupHost.open('probe-cgroups-test')
host?.close()

test('the host offers memory and pids cgroups to this runner', () => {
  assert.ok(host !== undefined, 'no writable memory and pids cgroups here: the process driver falls back to rlimits only')
})

test('a sandbox lives in its own cgroups: a fork bomb stops at its pids limit and the next job runs', { skip: host === undefined }, async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1, sandboxPids: 24, maxSessions: 0, id: 'cg-pids' }))
  try {
    await runner.start()
    assert.match(runner.isolation().properties.join('\n'), /cgroup v\d limits per sandbox: .*24 processes/)
    const bomb = await runner.execute({
      code: [
        'import os, time',
        'n = 0',
        'try:',
        '    while n < 200:',
        '        if os.fork() == 0:',
        '            time.sleep(5); os._exit(0)',
        '        n += 1',
        'except OSError as e:',
        '    print("stopped", n, type(e).__name__)'
      ].join('\n'),
      timeout_ms: 5000
    })
    assert.equal(bomb.status, 'ok', JSON.stringify(bomb))
    const m = /^stopped (\d+) BlockingIOError/.exec(bomb.stdout)
    assert.ok(m !== null, bomb.stdout)
    assert.ok(Number(m[1]) < 24, `forks stopped at ${m[1]}`)
    const next = await runner.execute({ code: 'print("after")' })
    assert.deepEqual([next.status, next.stdout], ['ok', 'after\n'])
  } finally { await runner.close() }
})

test('a sandbox over its cgroup memory limit is answered memory, and its cgroups go when the runner closes', { skip: host === undefined }, async () => {
  const runner = new Runner(runnerConfig({ backend: 'process', poolSize: 1, sandboxMemoryMb: 200, maxSessions: 0, id: 'cg-memory' }))
  try {
    await runner.start()
    // memory_mb is well above the cgroup's limit: the rlimit does not stop it, the cgroup does
    const hog = await runner.execute({ code: 'chunks = []\nwhile True: chunks.append(bytearray(16 << 20))', memory_mb: 2048, timeout_ms: 20_000 })
    assert.equal(hog.status, 'memory', JSON.stringify(hog.error))
    assert.match(hog.error?.message ?? '', /cgroup limit/, 'the cgroup stopped it, not the per-job rlimit')
    const next = await runner.execute({ code: 'print(1)' })
    assert.equal(next.status, 'ok')
  } finally { await runner.close() }
  assert.equal(existsSync('/sys/fs/cgroup/memory/sandfleet/cg-memory') || existsSync('/sys/fs/cgroup/sandfleet/cg-memory'), false, 'the runner removed its cgroups')
})
