// What the code sees inside a docker sandbox: no network, read-only root, uid 65534, no
// capabilities; a fork bomb stays inside the container's pids limit.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Socket } from 'node:net'
import { resolveExecRequest } from '@sandfleet/protocol'
import { DockerDriver } from '../../../src/backends/docker/docker-driver.ts'
import { REPO_EXECUTOR } from '../../helpers/docker.ts'
import { PTRACE_PROBE } from '../../helpers/ptrace-probe.ts'
import type { RunOutcome, Sandbox } from '../../../src/sandbox/contract.ts'

test('inside a docker sandbox: no network, read-only root, uid 65534, CapEff 0, no-new-privileges; a fork bomb gives error or killed and the next job runs', async () => {
  const accepted: Socket[] = []
  const server = createServer((s) => {
    accepted.push(s)
    s.end('hello')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  const driver = new DockerDriver({ runnerId: `docker-isolation-${process.pid}`, executorPath: REPO_EXECUTOR })
  let sandbox: Sandbox | undefined
  try {
    await driver.check()
    sandbox = driver.createSandbox('docker-isolation-0')
    await sandbox.start()
    const run = async (code: string, timeoutMs = 5000): Promise<RunOutcome> => {
      if (sandbox?.state !== 'ready') {
        await sandbox?.close()
        sandbox = driver.createSandbox('docker-isolation-1')
        await sandbox.start()
      }
      return await sandbox.execute({
        request: resolveExecRequest({ code, timeout_ms: timeoutMs }),
        maxOutputBytes: 65536
      })
    }

    const host = await run(
      `import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(("127.0.0.1", ${port}))\nprint(s.recv(5))`
    )
    assert.equal(host.status, 'error')
    assert.equal(host.stdout, '')
    assert.equal(host.error?.type, 'ConnectionRefusedError', JSON.stringify(host.error))
    assert.equal(accepted.length, 0, 'the host listener on 127.0.0.1 was reached from the sandbox')
    const out = await run(
      'import socket\ntry:\n  socket.create_connection(("10.255.255.1", 80), 1); print("connected")\nexcept OSError as e: print(type(e).__name__)\nprint([n for _, n in socket.if_nameindex()])'
    )
    assert.equal(out.stdout, "OSError\n['lo']\n")

    const ro = await run(
      'import errno\nfor p in ("/etc/x", "/usr/x", "/opt/sandfleet/executor.py"):\n  try: open(p, "w"); print("wrote", p)\n  except OSError as e: print(errno.errorcode[e.errno])'
    )
    assert.equal(ro.stdout, 'EROFS\nEROFS\nEROFS\n')

    // The executor's channel is a Unix socket of the runner's, connected before any job ran: its name is gone (the
    // listener closed) and so is its directory (bound read-only; nothing can be made in it), so a job cannot speak to
    // the runner.
    assert.equal(driver.options.channel, 'socket')
    const chan = await run(
      'import errno, os, socket\nprint(os.listdir("/run/sandfleet"), os.environ.get("SANDFLEET_CHANNEL"))\ns = socket.socket(socket.AF_UNIX)\ntry: s.connect("/run/sandfleet/executor.sock"); print("connected")\nexcept OSError as e: print(errno.errorcode[e.errno])\ntry: open("/run/sandfleet/x", "w")\nexcept OSError as e: print(errno.errorcode[e.errno])'
    )
    assert.equal(chan.stdout, '[] /run/sandfleet/executor.sock\nENOENT\nENOENT\n', JSON.stringify(chan))

    const ids = await run('import os\nprint(os.getuid(), os.geteuid(), os.getgid(), os.getgroups())')
    assert.equal(ids.stdout, '65534 65534 65534 [65534]\n', 'uid, euid, gid 65534; no supplementary group but its own')

    const flags = await run('import sys\nprint(sys.flags.isolated, "/opt/sandfleet" in sys.path)')
    assert.equal(flags.stdout, '1 False\n', "python -I: no PYTHON* variables, the executor's directory not importable")

    const status = await run('print(open("/proc/self/status").read())')
    const field = (name: string): string | undefined => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status.stdout)?.[1]
    for (const cap of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
      assert.equal(field(cap), '0000000000000000', `${cap} in the sandbox`)
    assert.equal(field('NoNewPrivs'), '1')
    assert.equal(field('Seccomp'), '2', "Docker's default seccomp filter")
    assert.equal(field('Seccomp_filters'), '2', "Docker's and the runner's own on top")

    // No user namespace to gain capabilities in (Docker's seccomp profile refuses it without CAP_SYS_ADMIN).
    const userns = await run(
      'import ctypes, errno, os\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), errno.errorcode[ctypes.get_errno()])'
    )
    assert.equal(userns.stdout, '-1 EPERM\n')

    // No process in the container can be attached to or have its memory opened: not the container's init, not the
    // executor's controller or zygotes, not the spare job process (each would outlive the job; init the container).
    const probe = await run(PTRACE_PROBE)
    assert.deepEqual([probe.status, probe.stdout], ['ok', 'done\n'], JSON.stringify(probe))
    const pid1 = await run('print(open("/proc/1/cmdline").read().split("\\0")[:3])')
    assert.match(
      pid1.stdout,
      /^\['\S*python3', '-I', '-c'\]\n$/,
      "the executor is the container's init (no docker-init of the job's uid, dumpable)"
    )

    const bomb = await run('import os\nwhile True:\n  os.fork()', 30_000)
    assert.ok(bomb.status === 'error' || bomb.status === 'killed', `the fork bomb gave ${bomb.status}`)
    assert.match(bomb.stderr, /BlockingIOError/, 'fork failed at the pids limit')
    const next = await run('import os\nprint(len([p for p in os.listdir("/proc") if p.isdigit()]) < 10)')
    assert.equal(next.status, 'ok')
    assert.equal(next.stdout, 'True\n', "the bomb's processes are gone")
  } finally {
    await sandbox?.close()
    await driver.close()
    server.close()
  }
})

test('the attached stdin/stdout channel (for a remote engine) runs jobs as the socket does', async () => {
  const driver = new DockerDriver({
    runnerId: `docker-attach-${process.pid}`,
    executorPath: REPO_EXECUTOR,
    channel: 'attach',
    spares: 0
  })
  let sandbox: Sandbox | undefined
  try {
    await driver.check()
    sandbox = driver.createSandbox('docker-attach-0')
    await sandbox.start()
    const r = await sandbox.execute({
      request: resolveExecRequest({ code: 'import os\nprint(6 * 7, os.path.exists("/run/sandfleet"))' }),
      maxOutputBytes: 65536
    })
    assert.deepEqual([r.status, r.stdout], ['ok', '42 False\n'], 'no channel directory bound in')
  } finally {
    await sandbox?.close()
    await driver.close()
  }
})

test("a docker sandbox says from outside when a job's processes fill its pids limit, and not while it is idle", async () => {
  const driver = new DockerDriver({
    runnerId: `docker-exhausted-${process.pid}`,
    executorPath: REPO_EXECUTOR,
    pidsLimit: 48,
    spares: 0
  })
  const sandbox = driver.createSandbox('docker-exhausted-0')
  try {
    await driver.check()
    await sandbox.start()
    assert.equal(await sandbox.exhausted?.(), undefined, 'idle: at no limit')
    // children that sleep, forked until the limit refuses more: the sandbox full, its CPU idle
    const running = sandbox.execute({
      request: resolveExecRequest({
        code: 'import os, time\nwhile True:\n  try: os.fork() or time.sleep(60)\n  except OSError: time.sleep(0.05)',
        timeout_ms: 8000
      }),
      maxOutputBytes: 65536
    })
    let said: string | undefined
    for (let i = 0; i < 150 && said === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      said = await sandbox.exhausted?.()
    }
    assert.match(said ?? 'nothing', /^its processes fill its limit \(\d+ of 48\)$/)
    const outcome = await running
    assert.equal(outcome.status, 'timeout')
  } finally {
    await sandbox.close()
    await driver.close()
  }
})
