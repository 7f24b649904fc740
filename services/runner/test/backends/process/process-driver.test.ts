import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { ProcessDriver } from '../../../src/backends/process/process-driver.ts'
import { SHIPPED_EXECUTOR } from '../../../src/kits/executor/python-image.ts'
import { PTRACE_PROBE } from '../../helpers/ptrace-probe.ts'

test('process driver: statuses, uid 65534, read-only root, no network to a 127.0.0.1 listener', async () => {
  const server = createServer((s) => {
    s.end('hello')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const driver = new ProcessDriver({ config: runnerConfig({}), logger: silentLogger })
  await driver.check()
  const sandbox = driver.createSandbox('process-test')
  try {
    await sandbox.start()
    const run = async (code: string, extra: object = {}) =>
      await sandbox.execute({ request: resolveExecRequest({ code, ...extra }), maxOutputBytes: 65536 })
    const ok = await run('import os; print(os.getuid(), os.getgid())')
    assert.equal(ok.status, 'ok')
    assert.equal(ok.stdout, '65534 65534\n')
    const host = await run('import socket; print(socket.gethostname())')
    assert.equal(host.stdout, 'sandbox\n', "the sandbox has a hostname of its own, not the host's")
    const ro = await run('open("/usr/sandfleet-test", "w")')
    assert.equal(ro.status, 'error')
    assert.equal(ro.error?.type, 'OSError')
    const net = await run(
      `import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(("127.0.0.1", ${port}))\nprint(s.recv(5))`
    )
    assert.equal(net.status, 'error')
    assert.equal(net.stdout, '')
    const files = await run('print(open("in.txt").read()); open("out.txt", "w").write("ret")', {
      files: { 'in.txt': Buffer.from('given').toString('base64') },
      fetch_files: ['out.txt']
    })
    assert.equal(files.stdout, 'given\n')
    assert.equal(Buffer.from(files.files['out.txt'] ?? '', 'base64').toString(), 'ret')
    // bubblewrap's own pid 1 (a reaper of the job's uid, dumpable, living as long as the sandbox) is not there: the
    // executor is pid 1, and nothing in the sandbox can be attached to or have its memory opened.
    const probe = await run(PTRACE_PROBE)
    assert.deepEqual([probe.status, probe.stdout], ['ok', 'done\n'], JSON.stringify(probe))
    const mem = await run('x = bytearray(400 * 1024 * 1024)', { memory_mb: 64 })
    assert.deepEqual([mem.status, mem.retire], ['memory', undefined])
    const kept = await run('print("kept")')
    assert.deepEqual([kept.status, kept.stdout], ['ok', 'kept\n'], 'the sandbox takes the next job after a MemoryError')
  } finally {
    await sandbox.close()
    await driver.close()
    server.close()
  }
})

test("process driver: an executor under a directory uid 65534 cannot enter (0700, a root runner's home) still serves", async (t) => {
  // bubblewrap runs as uid 65534 when the runner is root: the executor is handed to it on a pipe, never opened by path
  if (process.getuid?.() !== 0) t.diagnostic('not root: bubblewrap runs as this user, who can read the executor anyway')
  const dir = mkdtempSync(join(tmpdir(), 'sf-private-'))
  try {
    chmodSync(dir, 0o700)
    mkdirSync(join(dir, 'checkout'))
    const executor = join(dir, 'checkout', 'executor.py')
    copyFileSync(SHIPPED_EXECUTOR, executor)
    const driver = new ProcessDriver({ config: runnerConfig({ executorPath: executor }), logger: silentLogger })
    await driver.check()
    const sandbox = driver.createSandbox('private-dir-test')
    try {
      await sandbox.start()
      const ok = await sandbox.execute({
        request: resolveExecRequest({ code: 'import os; print(os.getuid(), 6 * 7)' }),
        maxOutputBytes: 65536
      })
      assert.deepEqual([ok.status, ok.stdout], ['ok', '65534 42\n'], JSON.stringify(ok))
    } finally {
      await sandbox.close()
      await driver.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
