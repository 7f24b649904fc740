import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { Runner } from '../../../src/runner/runner.ts'
import { runnerConfig } from '../../../src/config.ts'
import { CgroupHost } from '../../../src/kits/linux/cgroups.ts'

// These tests need the host's cgroups (CI runs as root on a cgroup v1 machine); a host
// without them is reported by the driver, and the first test says so instead of passing.
const host = await CgroupHost.open('probe-cgroups-test')
host?.close()

test('the host offers memory and pids cgroups to this runner', () => {
  assert.ok(
    host !== undefined,
    'no writable memory and pids cgroups here: the process driver falls back to rlimits only'
  )
})

test(
  'a sandbox lives in its own cgroups: a fork bomb stops at its pids limit and the next job runs',
  { skip: host === undefined },
  async () => {
    const runner = new Runner(
      runnerConfig({ backend: 'process', poolSize: 1, sandboxPids: 24, maxSessions: 0, id: 'cg-pids' })
    )
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
    } finally {
      await runner.close()
    }
  }
)

test(
  'a sandbox over its cgroup memory limit is answered memory and kept, and its cgroups go when the runner closes',
  { skip: host === undefined },
  async () => {
    const runner = new Runner(
      runnerConfig({ backend: 'process', poolSize: 1, sandboxMemoryMb: 200, maxSessions: 0, id: 'cg-memory' })
    )
    try {
      await runner.start()
      // memory_mb is well above the cgroup's limit: the rlimit does not stop it, the cgroup does
      const hog = await runner.execute({
        code: 'chunks = []\nwhile True: chunks.append(bytearray(16 << 20))',
        memory_mb: 2048,
        timeout_ms: 20_000
      })
      assert.equal(hog.status, 'memory', JSON.stringify(hog.error))
      assert.match(hog.error?.message ?? '', /cgroup limit/, 'the cgroup stopped it, not the per-job rlimit')
      const next = await runner.execute({ code: 'print(1)' })
      assert.equal(next.status, 'ok')
      assert.equal(next.sandbox, hog.sandbox, 'the OOM killer took the job, not the sandbox: it serves on')
      assert.equal(runner.poolStats()[0].replacements, 0)
    } finally {
      await runner.close()
    }
    const left = (host?.dirs ?? [])
      .flatMap((d) => readdirSync(dirname(d)))
      .filter((name) => name.startsWith('cg-memory@'))
    assert.deepEqual(left, [], 'the runner removed its cgroups')
  }
)

const CGROUPS_MODULE = new URL('../../../src/kits/linux/cgroups.ts', import.meta.url).href

/**
 * Another process that opens the host's cgroups as runner `id`, makes one sandbox cgroup and
 * starts a process in it that outlives its parent (as a sandbox would not, unless it escaped);
 * answers the child, its directories and that process's pid.
 */
async function cgroupOwner(id: string): Promise<{ child: ChildProcess; dirs: string[]; orphan: number }> {
  const script = `
    import { spawn } from 'node:child_process'
    const { CgroupHost } = await import(${JSON.stringify(CGROUPS_MODULE)})
    const host = await CgroupHost.open(${JSON.stringify(id)})
    const cgroup = host.create('sandbox-1', { memoryBytes: 64 << 20, pids: 8 })
    const c = cgroup.wrap({ file: 'sleep', args: ['600'] })
    const orphan = spawn(c.file, c.args, { env: { ...process.env, ...c.env }, stdio: 'ignore', detached: true })
    orphan.unref()
    console.log(JSON.stringify({ dirs: host.dirs, orphan: orphan.pid }))
    setInterval(() => {}, 1000)`
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string]
  return { child, ...JSON.parse(line) }
}

/** Whether `pid` runs (a zombie waiting for whoever adopted it does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

test(
  "a runner starting sweeps the cgroups of runners killed outright, never a live runner's",
  { skip: host === undefined },
  async () => {
    const dead = await cgroupOwner(`sweep-dead-${process.pid}`)
    const live = await cgroupOwner(`sweep-live-${process.pid}`)
    // a runner of before the owner tags, killed: its default id names its pid (gone) and this host
    const legacy = (host?.dirs ?? []).map((d) => join(dirname(d), `runner-${hostname()}-${dead.child.pid!}`))
    try {
      dead.child.kill('SIGKILL')
      await once(dead.child, 'exit')
      for (const d of legacy) mkdirSync(join(d, 'process-python-0'), { recursive: true })
      for (const d of [...dead.dirs, ...live.dirs]) assert.ok(existsSync(join(d, 'sandbox-1')), d)
      assert.ok(alive(dead.orphan), 'the killed runner left a process in its sandbox cgroup')

      const sweeper = await CgroupHost.open(`sweeper-${process.pid}`)
      sweeper?.close()
      for (const d of [...dead.dirs, ...legacy]) assert.equal(existsSync(d), false, `${d} swept`)
      for (const d of [...dead.dirs, ...legacy]) assert.ok(sweeper?.swept.includes(d), `${d} reported swept`)
      for (const d of live.dirs) assert.equal(sweeper?.swept.includes(d), false)
      assert.equal(alive(dead.orphan), false, "the process left in the dead runner's cgroup was killed")
      for (const d of live.dirs) assert.ok(existsSync(join(d, 'sandbox-1')), `the live runner's ${d} stays`)
      assert.ok(alive(live.orphan), "the live runner's sandbox process runs on")
    } finally {
      for (const p of [dead.orphan, live.orphan]) {
        try {
          process.kill(p, 'SIGKILL')
        } catch {}
      }
      live.child.kill('SIGKILL')
      await once(live.child, 'exit')
      await CgroupHost.open(`sweeper-${process.pid}`).then((h) => h?.close())
    }
    for (const d of live.dirs) assert.equal(existsSync(d), false, `${d} swept once its runner died`)
  }
)
