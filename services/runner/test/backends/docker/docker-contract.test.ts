// Every status of the core contract through the docker driver, against real containers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveExecRequest, type ExecRequest } from '@sandfleet/protocol'
import { DockerDriver } from '../../../src/backends/docker/docker-driver.ts'
import type { DockerSandbox } from '../../../src/backends/docker/docker-sandbox.ts'
import { REPO_EXECUTOR } from '../../helpers/docker.ts'
import type { RunOutcome } from '../../../src/sandbox/contract.ts'

const b64 = (text: string): string => Buffer.from(text).toString('base64')

test('docker driver: ok, error, exit code, stdin, files, output cap, killed, timeout, memory (rlimit and cgroup OOM), nothing kept between jobs', async () => {
  // A small container memory limit so that the cgroup OOM case is quick.
  const driver = new DockerDriver({
    runnerId: `docker-contract-${process.pid}`,
    memoryMb: 384,
    executorPath: REPO_EXECUTOR
  })
  let n = 0
  const fresh = async (): Promise<DockerSandbox> => {
    const s = driver.createSandbox(`docker-contract-${n++}`) as DockerSandbox
    await s.start()
    return s
  }
  try {
    await driver.check()
    let sandbox = await fresh()
    const run = async (req: ExecRequest, maxOutputBytes = 65536): Promise<RunOutcome> => {
      if (sandbox.state !== 'ready') {
        await sandbox.close()
        sandbox = await fresh()
      }
      return await sandbox.execute({ request: resolveExecRequest({ timeout_ms: 5000, ...req }), maxOutputBytes })
    }

    const ok = await run({ code: 'print(1+1)' })
    assert.deepEqual([ok.status, ok.stdout, ok.exit_code, ok.error], ['ok', '2\n', 0, null])

    const raised = await run({ code: 'print("before")\n1/0' })
    assert.equal(raised.status, 'error')
    assert.equal(raised.stdout, 'before\n')
    assert.equal(raised.error?.type, 'ZeroDivisionError')
    assert.match(raised.stderr, /ZeroDivisionError: division by zero/)

    const exit = await run({ code: 'import sys\nsys.exit(3)' })
    assert.equal(exit.status, 'error')
    assert.equal(exit.exit_code, 3)

    const stdin = await run({
      code: 'import sys\nprint(sys.stdin.read().upper(), end="")',
      stdin: 'line one\nline two\n'
    })
    assert.equal(stdin.stdout, 'LINE ONE\nLINE TWO\n')

    const files = await run({
      code: 'import os\nprint(open("data/in.txt").read(), os.getcwd())\nopen("out.txt", "w").write("made in the container")',
      files: { 'data/in.txt': b64('given') },
      fetch_files: ['out.txt', 'missing.txt']
    })
    assert.equal(files.status, 'ok')
    assert.equal(files.stdout, 'given /tmp/job\n')
    assert.deepEqual(Object.keys(files.files), ['out.txt'])
    assert.equal(Buffer.from(files.files['out.txt'] ?? '', 'base64').toString(), 'made in the container')

    const capped = await run({ code: 'import sys\nsys.stdout.write("x" * 200000)\nsys.stderr.write("e" * 5000)' }, 1000)
    assert.equal(capped.status, 'ok')
    assert.equal(capped.stdout, 'x'.repeat(1000))
    assert.equal(capped.stderr, 'e'.repeat(1000))
    assert.deepEqual(capped.truncated, { stdout: true, stderr: true })

    // A job leaves files in /tmp and its cwd: the next job in the same container sees none.
    const leave = await run({ code: 'open("/tmp/left", "w").write("1"); open("here", "w").write("1")' })
    assert.equal(leave.status, 'ok')
    const look = await run({ code: 'import os\nprint(os.listdir("/tmp"), os.listdir("."))' })
    assert.equal(look.stdout, "['job'] []\n")

    const killed = await run({
      code: 'import os, signal\nprint("bye", flush=True)\nos.kill(os.getpid(), signal.SIGKILL)'
    })
    assert.equal(killed.status, 'killed')
    assert.equal(killed.stdout, 'bye\n')
    assert.equal(killed.error?.type, 'SIGKILL')

    const id = sandbox.id
    const spin = await run({ code: 'print("spinning", flush=True)\nwhile True: pass', timeout_ms: 300 })
    assert.equal(spin.status, 'timeout')
    assert.equal(spin.stdout, 'spinning\n')
    assert.equal(spin.retire, undefined)
    assert.ok(spin.duration_ms < 2000, `the spin ran ${spin.duration_ms} ms past a 300 ms timeout`)
    assert.equal(sandbox.state, 'ready', 'a timeout costs the job, not the sandbox')
    const after = await run({ code: 'print("next")' })
    assert.equal(after.stdout, 'next\n')
    assert.equal(sandbox.id, id)

    // memory_mb is the job's own limit (RLIMIT_AS): a clean MemoryError, status memory.
    const rlimit = await run({ code: 'x = bytearray(300 * 1024 * 1024)', memory_mb: 64 })
    assert.equal(rlimit.status, 'memory')
    assert.equal(rlimit.retire, undefined)

    // Past the container's own limit (384 MiB): the kernel's OOM killer, still status memory.
    const bomb = await run({
      code: 'x = []\nwhile True: x.append(bytearray(16 << 20))',
      memory_mb: 4096,
      timeout_ms: 20000
    })
    assert.equal(bomb.status, 'memory', JSON.stringify(bomb.error))
    assert.equal(bomb.retire, undefined)
    assert.match(bomb.error?.message ?? '', /out of memory/)
    const survived = await run({ code: 'print("fine")' })
    assert.equal(survived.stdout, 'fine\n')
    await sandbox.close()
  } finally {
    await driver.close()
  }
})
