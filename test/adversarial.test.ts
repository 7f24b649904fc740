/**
 * Hostile code through a real gateway in front of a real process-backend runner (bubblewrap).
 * The bar: hostile code gets a status (timeout, memory, killed, error), never a crashed runner, a
 * hung queue or a lost result, and no job sees another job's state. Every case asserts the status
 * the user sees and then that the fleet is healthy: the next plain job answers ok, the pool is
 * back to full warm, and no process a job started is left in any sandbox's cgroup.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { SYSCALL_TABLES } from '../services/runner/src/kits/linux/seccomp.ts'
import { ownerTag } from '../services/runner/src/kits/linux/cgroups.ts'
import { post, startFleet, type TestFleet } from './helpers/fleet.ts'

const RUNNER = `adv-${process.pid}`
/** The runner's cgroup directory's name under each controller's `sandfleet/` (the runner runs in this process). */
const RUNNER_CGROUP = `${RUNNER}@${ownerTag()}`
const POOL = 2
let fleet: TestFleet

before(async () => {
  // The mixed case queues 100 jobs on 2 sandboxes: a call may wait up to a minute for a sandbox
  // (the gateway's queue budget and the runner's queue timeout); the runner's grace stays small.
  fleet = await startFleet(
    [RUNNER],
    { poolSize: POOL, sandboxMemoryMb: 512, graceMs: 1000, queueTimeoutMs: 60_000 },
    { queueTimeoutMs: 60_000 }
  )
  // strays() reads the sandboxes' pids cgroups here: where the host has them, they must be where it looks
  if (existsSync('/sys/fs/cgroup/pids/sandfleet'))
    assert.ok(existsSync(`/sys/fs/cgroup/pids/sandfleet/${RUNNER_CGROUP}`), RUNNER_CGROUP)
})
after(async () => {
  await fleet?.close()
  // closed: every sandbox process is gone, and so are the runner's cgroups
  for (const controller of ['pids', 'memory'])
    assert.equal(
      existsSync(`/sys/fs/cgroup/${controller}/sandfleet/${RUNNER_CGROUP}`),
      false,
      `${controller} cgroup of ${RUNNER} left behind`
    )
})

/** Runs one snippet through the gateway; answers the ExecResult. */
async function run(code: string, extra: Record<string, unknown> = {}): Promise<any> {
  const { status, body } = await post(`${fleet.url}/v1/execute`, { code, timeout_ms: 2000, memory_mb: 256, ...extra })
  assert.equal(status, 200, JSON.stringify(body))
  return body
}

/** `/proc/PID/stat`'s parent pid, or undefined when the process is gone. */
function ppidOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

/**
 * What is wrong with the processes in this runner's sandbox cgroups (empty when nothing). A warm
 * sandbox is bwrap → controller (pid 1 inside) → zygotes (at most 4: bare, std, sym, sci) → one spare child
 * each; anything deeper, a second child of a zygote or a controller child that is not a zygote
 * is a process some job left behind. Where the host has no pids cgroup this cannot be checked.
 */
function strays(): string[] {
  const base = `/sys/fs/cgroup/pids/sandfleet/${RUNNER_CGROUP}`
  if (!existsSync(base)) return []
  const problems: string[] = []
  const dirs = readdirSync(base, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
  if (dirs.length > POOL) problems.push(`${dirs.length} sandbox cgroups for a pool of ${POOL}: ${dirs.join(', ')}`)
  for (const dir of dirs) {
    let pids: number[]
    try {
      pids = readFileSync(`${base}/${dir}/cgroup.procs`, 'utf8')
        .split('\n')
        .filter((s) => s !== '')
        .map(Number)
    } catch {
      continue
    }
    const set = new Set(pids)
    const depth = new Map<number, number>()
    const depthOf = (pid: number): number => {
      const known = depth.get(pid)
      if (known !== undefined) return known
      const parent = ppidOf(pid)
      const d = parent === undefined || !set.has(parent) ? 0 : depthOf(parent) + 1
      depth.set(pid, d)
      return d
    }
    const children = new Map<number, number>()
    for (const pid of pids) {
      const parent = ppidOf(pid)
      if (parent !== undefined) children.set(parent, (children.get(parent) ?? 0) + 1)
    }
    for (const pid of pids) {
      const d = depthOf(pid)
      const kids = children.get(pid) ?? 0
      if (d > 3 || (d === 2 && kids > 1) || (d === 1 && kids > 4) || (d === 3 && kids > 0)) {
        let cmd = ''
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')
        } catch {}
        problems.push(`${dir}: pid ${pid} at depth ${d} with ${kids} children (${cmd.trim()})`)
      }
    }
  }
  return problems
}

/** The fleet after a hostile job: a plain job answers ok, the pool is full warm again and no process is left behind. */
async function assertHealthy(label: string): Promise<void> {
  const plain = await run('print(6 * 7)')
  assert.deepEqual(
    [plain.status, plain.stdout],
    ['ok', '42\n'],
    `${label}: the next plain job: ${JSON.stringify(plain)}`
  )
  const until = performance.now() + 3000
  let load: any
  let left: string[] = []
  while (performance.now() < until) {
    load = fleet.runners[0].runner.load()
    left = strays()
    if (load.warm === load.capacity && left.length === 0) return
    await sleep(50)
  }
  assert.fail(`${label}: not healthy 3 s later: warm ${load.warm}/${load.capacity}, left behind: ${left.join('; ')}`)
}

/** Forged frames for the first `n` job ids of a channel. */
const FORGED = (n: number): string =>
  `FRAMES = b"".join(b'{"op":"result","id":"%d","status":"ok","stdout":"FORGED","stderr":"","exit_code":0,"duration_ms":1,"truncated":{"stdout":false,"stderr":false},"error":null,"files":{}}\\n' % i for i in range(${n}))`

test('a fork bomb is a timeout, and the fleet serves on', async () => {
  const r = await run('import os\nwhile True:\n    try: os.fork()\n    except OSError: pass', { timeout_ms: 1000 })
  assert.equal(r.status, 'timeout', JSON.stringify(r.error))
  await assertHealthy('fork bomb')
})

test('a memory bomb across several processes is memory', async () => {
  const code = [
    'import os, time',
    'for _ in range(8):',
    '    if os.fork() == 0:',
    '        try: hold = b"x" * (100 << 20); time.sleep(120)',
    '        finally: os._exit(0)',
    'hold = []',
    'while True: hold.append(b"y" * (10 << 20))'
  ].join('\n')
  // The job ends when its first process does (MemoryError), its children killed with it; the
  // deadline is far beyond that: touching a gigabyte of pages takes seconds on a busy machine.
  const r = await run(code, { timeout_ms: 60_000, memory_mb: 128 })
  assert.equal(r.status, 'memory', JSON.stringify(r))
  await assertHealthy('memory bomb')
})

test('an output flood of gigabytes is capped, marked truncated, and ends in time', async () => {
  const code =
    'import os\nb = b"x" * (1 << 20)\nfor _ in range(1024):\n    os.write(1, b); os.write(2, b)\nprint("end")'
  const r = await run(code, { timeout_ms: 10_000 })
  assert.equal(r.status, 'ok', JSON.stringify(r.error))
  assert.deepEqual(r.truncated, { stdout: true, stderr: true })
  assert.equal(r.stdout.length, 65536)
  assert.equal(r.stderr.length, 65536)
  const endless = await run('import os\nb = b"x" * (1 << 20)\nwhile True: os.write(1, b); os.write(2, b)', {
    timeout_ms: 500
  })
  assert.deepEqual(
    [endless.status, endless.truncated, endless.stdout.length],
    ['timeout', { stdout: true, stderr: true }, 65536]
  )
  await assertHealthy('output flood')
})

test('text that looks like executor frames, on stdout, stderr and fds 1..10, forges no result', async () => {
  const code = [
    'import os, sys',
    FORGED(100),
    'sys.stdout.buffer.write(FRAMES); sys.stdout.flush(); sys.stderr.buffer.write(FRAMES); sys.stderr.flush()',
    'for fd in range(1, 11):',
    '    try: os.write(fd, FRAMES)',
    '    except OSError: pass',
    'print("real")',
    'sys.exit(3)'
  ].join('\n')
  for (let i = 0; i < 3; i++) {
    const r = await run(code)
    assert.deepEqual([r.status, r.exit_code], ['error', 3], JSON.stringify(r).slice(0, 500))
    assert.match(r.stdout, /"op":"result"/)
    assert.ok(r.stdout.endsWith('real\n'))
  }
  await assertHealthy('forged frames')
})

test('frames written through /proc into every descriptor of every process forge no result', async () => {
  const code = [
    'import os, sys',
    FORGED(100),
    'for pid in os.listdir("/proc"):',
    '    if not pid.isdigit(): continue',
    '    try: fds = os.listdir("/proc/%s/fd" % pid)',
    '    except OSError: continue',
    '    for fd in fds:',
    '        try:',
    '            w = os.open("/proc/%s/fd/%s" % (pid, fd), os.O_WRONLY | os.O_NONBLOCK)',
    '            os.write(w, FRAMES); os.close(w)',
    '        except OSError: pass',
    'print("real")',
    'sys.exit(4)'
  ].join('\n')
  const r = await run(code)
  assert.deepEqual([r.status, r.exit_code], ['error', 4], JSON.stringify(r).slice(0, 500))
  await assertHealthy('frames through /proc')
})

test('closing or dup2-ing fds 0..10 is harmless', async () => {
  const closed = await run('import os\nfor fd in range(11):\n    try: os.close(fd)\n    except OSError: pass')
  assert.deepEqual([closed.status, closed.stdout], ['ok', ''], JSON.stringify(closed))
  const duped = await run(
    'import os\nnull = os.open("/dev/null", os.O_RDWR)\nfor fd in range(11):\n    if fd != null: os.dup2(null, fd)\nprint("gone")'
  )
  assert.deepEqual([duped.status, duped.stdout], ['ok', ''], JSON.stringify(duped))
  const swapped = await run('import os\nos.dup2(2, 1)\nos.dup2(1, 3)\nprint("to stderr")\nraise KeyError("k")')
  assert.equal(swapped.stdout, '')
  assert.match(swapped.stderr, /to stderr/)
  assert.equal(swapped.status, 'error')
  await assertHealthy('fds closed')
})

test('a double-forked setsid grandchild is killed at the end of its job and writes nothing into the next', async () => {
  const code = [
    'import os, time',
    'if os.fork() == 0:',
    '    os.setsid()',
    '    if os.fork() == 0:',
    '        for _ in range(200):',
    '            for fd in (1, 2):',
    '                try: os.write(fd, b"LEAK\\n")',
    '                except OSError: pass',
    '            try: open("/tmp/leak-%d" % os.getpid(), "w").write("x")',
    '            except OSError: pass',
    '            time.sleep(0.01)',
    '    os._exit(0)',
    'time.sleep(0.05)',
    'print("parent done")'
  ].join('\n')
  const r = await run(code)
  assert.equal(r.status, 'ok')
  assert.ok(r.stdout.startsWith('parent done') || r.stdout.includes('parent done\n'))
  const next = await run(
    'import os, time\ntime.sleep(0.3)\nprint(sorted(n for n in os.listdir("/tmp") if n.startswith("leak")))'
  )
  assert.equal(next.sandbox, r.sandbox, 'the next job runs in the same sandbox')
  assert.deepEqual([next.status, next.stdout, next.stderr], ['ok', '[]\n', ''])
  await assertHealthy('grandchild')
})

test('killing the zygote, pid 1, its own group or every process it can see is a status, never a hang', async () => {
  const cases: Array<[string, string[]]> = [
    ['import os\nos.kill(os.getppid(), 9)\nimport time\ntime.sleep(0.2)\nprint("after")', ['killed', 'ok']],
    ['import os\nos.kill(1, 9)\nprint("pid 1 lives")', ['ok']],
    ['import os\nos.killpg(0, 9)', ['killed']],
    [
      'import os\nfor p in os.listdir("/proc"):\n    if p.isdigit() and int(p) != os.getpid():\n        try: os.kill(int(p), 9)\n        except OSError: pass\nimport time\ntime.sleep(0.2)',
      ['killed']
    ]
  ]
  for (const [code, statuses] of cases) {
    const r = await run(code)
    assert.ok(statuses.includes(r.status), `${code}: ${JSON.stringify(r)}`)
    await assertHealthy(code)
  }
})

test('SIGSTOP to itself is a timeout; to its zygote or the controller, the sandbox stops answering: stalled, replaced', async () => {
  const self = await run('import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)', { timeout_ms: 500 })
  assert.equal(self.status, 'timeout', JSON.stringify(self))
  await assertHealthy('SIGSTOP to itself')
  // A sandbox whose own processes are stopped cannot say what its job did: the runner's hard
  // deadline answers it, and what it catches is the fleet's (infra_error, stalled), never timeout.
  const cases = [
    'import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\nwhile True: pass',
    'import os, signal\nz = os.getppid()\nc = int(open("/proc/%d/stat" % z).read().rsplit(")", 1)[1].split()[1])\nos.kill(c, signal.SIGSTOP)\nwhile True: pass'
  ]
  for (const code of cases) {
    const r = await run(code, { timeout_ms: 500 })
    assert.ok(
      r.status === 'timeout' || (r.status === 'infra_error' && r.error?.type === 'SF_ERR_RUNNER_STALLED'),
      `${code}: ${JSON.stringify(r)}`
    )
    await assertHealthy(code)
  }
})

test('ignoring SIGTERM and SIGINT in an endless loop is a timeout', async () => {
  const r = await run(
    'import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):\n    signal.signal(s, signal.SIG_IGN)\nwhile True: pass',
    { timeout_ms: 500 }
  )
  assert.equal(r.status, 'timeout')
  await assertHealthy('signals ignored')
})

test('raising the rlimits back fails', async () => {
  const code = [
    'import resource',
    'raised = []',
    'for name in ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CPU"):',
    '    r = getattr(resource, name)',
    '    soft, hard = resource.getrlimit(r)',
    '    try: resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)); raised.append(name)',
    '    except (ValueError, OSError): pass',
    'print(raised)'
  ].join('\n')
  const r = await run(code)
  assert.deepEqual([r.status, r.stdout], ['ok', '[]\n'], JSON.stringify(r))
  await assertHealthy('rlimits')
})

test('a segfault through ctypes is killed', async () => {
  const r = await run('import ctypes\nctypes.string_at(0)')
  assert.deepEqual([r.status, r.error?.type], ['killed', 'SIGSEGV'], JSON.stringify(r))
  await assertHealthy('segfault')
})

test('deep recursion is an error or a kill, never a lost result', async () => {
  const plain = await run('def f(n): return f(n + 1)\nf(0)')
  assert.deepEqual([plain.status, plain.error?.type], ['error', 'RecursionError'])
  const deep = await run('import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n): return f(n + 1)\nf(0)', {
    timeout_ms: 1500,
    memory_mb: 64
  })
  assert.ok(['error', 'killed', 'memory', 'timeout'].includes(deep.status), JSON.stringify(deep))
  await assertHealthy('recursion')
})

test('a thousand threads fail to start past the limits: an error', async () => {
  const r = await run(
    'import threading, time\nts = [threading.Thread(target=time.sleep, args=(5,), daemon=True) for _ in range(1000)]\nfor t in ts: t.start()\nprint("all started")'
  )
  assert.deepEqual([r.status, r.error?.type], ['error', 'RuntimeError'], JSON.stringify(r))
  await assertHealthy('threads')
})

test('a huge file hits the file size limit; filling /tmp is an error and /tmp is empty for the next job', async () => {
  const big = await run('with open("big", "wb") as f: f.write(b"x" * (100 << 20))', { timeout_ms: 3000 })
  assert.deepEqual([big.status, big.error?.type], ['error', 'OSError'], JSON.stringify(big))
  const fill = await run(
    'import os\nchunk = b"x" * (32 << 20)\nfor i in range(1000):\n    with open("/tmp/fill-%d" % i, "wb") as f: f.write(chunk)',
    { timeout_ms: 5000 }
  )
  assert.ok(['error', 'memory', 'killed'].includes(fill.status), JSON.stringify(fill))
  const next = await run('import os\nprint(os.listdir("/tmp"))')
  assert.deepEqual([next.status, next.stdout], ['ok', "['work']\n"])
  await assertHealthy('files')
})

test('sys.stdout replaced or closed; os._exit with output still buffered', async () => {
  const none = await run('import sys\nsys.stdout = None\nprint("x")\nsys.stderr = None\nraise KeyError("k")')
  assert.deepEqual([none.status, none.error?.type], ['error', 'KeyError'], JSON.stringify(none))
  const closed = await run('import sys\nsys.stdout.close()\nsys.stderr.close()\nprint("x")')
  assert.deepEqual([closed.status, closed.error?.type], ['error', 'ValueError'], JSON.stringify(closed))
  const exited = await run('import os, sys\nprint("buffered", end="")\nos._exit(0)')
  assert.deepEqual([exited.status, exited.exit_code], ['ok', 0])
  assert.ok(['', 'buffered'].includes(exited.stdout))
  await assertHealthy('stdout')
})

test('a job sees nothing of the runner, the host or another sandbox', async () => {
  const marker = `marker-${process.pid}`
  const holder = run(
    `import time\nopen("/tmp/${marker}", "w").write("secret")\nopen("${marker}", "w").write("secret")\ntime.sleep(1.5)\nprint("held")`,
    { timeout_ms: 4000 }
  )
  await sleep(300)
  const code = [
    'import os, glob',
    'seen = []',
    'for pid in os.listdir("/proc"):',
    '    if not pid.isdigit(): continue',
    '    try: seen.append(open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\\0", b" ").decode())',
    '    except OSError: pass',
    `found = [p for d in ("/tmp", "/dev", "/run", "/var", "/home", "/root", "/opt", "/work") for p in glob.glob(d + "/**/*${marker}*", recursive=True)]`,
    `found += glob.glob("/proc/*/root/tmp/*${marker}*") + glob.glob("/proc/*/root/tmp/*/*${marker}*") + glob.glob("/proc/*/cwd/*${marker}*")`,
    'print(sorted(set(os.listdir("/"))))',
    'print([c for c in seen if "node" in c or "tsx" in c or "sandfleet" in c and "executor" not in c])',
    'print(found)',
    'print(len([p for p in os.listdir("/proc") if p.isdigit()]) < 20)'
  ].join('\n')
  const r = await run(code, { timeout_ms: 5000 })
  assert.equal(r.status, 'ok', JSON.stringify(r))
  const [root, runnerProcs, found, few] = r.stdout.split('\n')
  assert.doesNotMatch(root, /'work'|'root'|'home'|'var'/, root)
  assert.equal(runnerProcs, '[]')
  assert.equal(found, '[]')
  assert.equal(few, 'True')
  assert.equal((await holder).stdout, 'held\n')
  await assertHealthy('visibility')
})

test('monkey-patched builtins, modules, env, cwd and IPC leave the next job clean', async () => {
  const dirty = [
    'import builtins, os, sys, json, ctypes',
    'builtins.len = lambda x: -1',
    'builtins.print = lambda *a, **k: None',
    'json.dumps = lambda *a, **k: "patched"',
    'os.environ["SANDFLEET_LEAK"] = "1"',
    'sys.path.insert(0, "/tmp")',
    'os.chdir("/")',
    'sys.modules["leaky"] = type(sys)("leaky")',
    'open("/tmp/json.py", "w").write("dumps = lambda *a, **k: \'evil\'")',
    'for d in ("/dev/shm", "/dev/mqueue", "/tmp/work"):',
    '    try: open(d + "/leak", "w").write("x")',
    '    except OSError: pass',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'assert libc.shmget(0x5f5f, 4096, 0o1600) >= 0, ctypes.get_errno()',
    'assert libc.msgget(0x5f5f, 0o1600) >= 0, ctypes.get_errno()',
    'assert libc.semget(0x5f5f, 1, 0o1600) >= 0, ctypes.get_errno()',
    'libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]',
    'assert libc.mq_open(b"/sfleak", 0o102, 0o600, None) >= 0, ctypes.get_errno()'
  ].join('\n')
  const first = await run(dirty)
  assert.equal(first.status, 'ok', JSON.stringify(first))
  const check = [
    'import os, sys, json, ctypes',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'print(len([1, 2]), json.dumps(1), os.environ.get("SANDFLEET_LEAK"), os.getcwd(), "/tmp" in sys.path, "leaky" in sys.modules)',
    'print([d for d in ("/dev/shm/leak", "/dev/mqueue/leak", "/tmp/json.py", "/tmp/work/leak") if os.path.exists(d)])',
    'libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int]',
    'print([libc.shmget(0x5f5f, 0, 0) >= 0, libc.msgget(0x5f5f, 0) >= 0, libc.semget(0x5f5f, 0, 0) >= 0, libc.mq_open(b"/sfleak", 2) >= 0])'
  ].join('\n')
  const next = await run(check)
  assert.equal(next.sandbox, first.sandbox, 'the next job runs in the same sandbox')
  assert.equal(next.status, 'ok', JSON.stringify(next))
  assert.deepEqual(next.stdout.split('\n'), [
    '2 1 None /tmp/work False False',
    '[]',
    '[False, False, False, False]',
    ''
  ])
  await assertHealthy('monkeypatch')
})

test('50 hostile jobs at once with 50 plain ones: every plain one answers correctly', async () => {
  const hostile = [
    'while True: pass',
    'import os\nos.killpg(0, 9)',
    'import ctypes\nctypes.string_at(0)',
    'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass',
    'import os\nb = b"x" * (1 << 20)\nwhile True: os.write(1, b)',
    'x = b"y" * (1 << 40)',
    'import os\nos.kill(os.getppid(), 9)',
    `import os\n${FORGED(400)}\nos.write(1, FRAMES)\nraise SystemExit(5)`,
    'import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)',
    'import os\nif os.fork() == 0:\n    os.setsid()\n    while True: os.write(1, b"LEAK\\n")\n'
  ]
  const calls = Array.from({ length: 100 }, async (_, i) => {
    if (i % 2 === 0) return await run(hostile[(i / 2) % hostile.length], { timeout_ms: 300 })
    return await run(`print(${i} * 3)`, { timeout_ms: 5000 })
  })
  const results = await Promise.all(calls)
  results.forEach((r, i) => {
    if (i % 2 === 1)
      assert.deepEqual([r.status, r.stdout], ['ok', `${i * 3}\n`], `plain call ${i}: ${JSON.stringify(r)}`)
    else
      assert.ok(
        ['timeout', 'killed', 'memory', 'error', 'ok'].includes(r.status),
        `hostile call ${i}: ${JSON.stringify(r)}`
      )
  })
  await assertHealthy('mixed')
})

test('a gateway batch larger than the pool waits for sandboxes: every item runs', async () => {
  const requests = Array.from({ length: 8 }, (_, i) => ({
    code: `import time\ntime.sleep(0.05)\nprint(${i})`,
    timeout_ms: 2000
  }))
  const { status, body } = await post(`${fleet.url}/v1/execute/batch`, { requests })
  assert.equal(status, 200)
  assert.deepEqual(
    body.results.map((r: any) => [r.status, r.stdout]),
    requests.map((_, i) => ['ok', `${i}\n`])
  )
})

/** Python that finds this sandbox's zygotes and their spare children (the processes the next jobs run in). */
const FIND_SPARES = [
  'import os, signal, resource, time',
  'def ppid(p):',
  '    try: return int(open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[1])',
  '    except (OSError, ValueError): return None',
  'time.sleep(0.1)',
  'me, zygote = os.getpid(), os.getppid()',
  'controller = ppid(zygote)',
  'pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]',
  'zygotes = [p for p in pids if ppid(p) == controller]',
  'spares = [p for p in pids if p != me and ppid(p) in zygotes]',
  'assert spares, (zygotes, pids)'
].join('\n')

test('a job that kills, stops, renices or limits the spare job processes and zygotes does not touch the next jobs', async () => {
  const attacks = [
    'for p in spares: os.kill(p, signal.SIGKILL)',
    'for p in spares: os.kill(p, signal.SIGSTOP)',
    'for p in spares: os.kill(p, signal.SIGTERM)',
    'for p in spares + zygotes: os.setpriority(os.PRIO_PROCESS, p, 19)',
    'for p in spares + zygotes: os.sched_setscheduler(p, os.SCHED_IDLE, os.sched_param(0))',
    'for p in spares + zygotes: os.sched_setaffinity(p, {min(os.sched_getaffinity(0))})',
    'for p in spares + zygotes:\n    for r in (resource.RLIMIT_NOFILE, resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_STACK):\n        resource.prlimit(p, r, (16, 16) if r == resource.RLIMIT_NOFILE else (1 << 20, 1 << 20) if r != resource.RLIMIT_CPU else (1, 1))'
  ]
  // The CPUs a job may use are the runner's (taskset may give it fewer than the machine's): as a fresh sandbox has
  // them.
  const probe =
    'print(6 * 7, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), sorted(os.sched_getaffinity(0)))'
  const fresh = await run(`import os\n${probe}`)
  assert.equal(fresh.status, 'ok', JSON.stringify(fresh))
  for (const attack of attacks) {
    const r = await run(`${FIND_SPARES}\n${attack}\nprint("done")`)
    assert.deepEqual([r.status, r.stdout], ['ok', 'done\n'], `${attack}: ${JSON.stringify(r)}`)
    for (const code of [`import os\n${probe}`, `import numpy, os\n${probe}`]) {
      const next = await run(
        `${code}\nx = [bytearray(1 << 20) for _ in range(64)]\nf = [open("/dev/null") for _ in range(100)]`,
        { timeout_ms: 10_000 }
      )
      assert.deepEqual(
        [next.status, next.stdout],
        ['ok', fresh.stdout],
        `after ${attack}: ${code}: ${JSON.stringify(next)}`
      )
    }
    await assertHealthy(attack)
  }
})

test('a job that forges a "tampered" report about itself runs once and is its own error (the check is the controller\'s, from outside)', async () => {
  // Before, the job process reported the check itself: this report made the pool rerun the job and answer infra_error.
  const marker = `forged-${process.pid}-${Date.now()}`
  const r = await run(`import os\nprint("${marker}", flush=True)\nos.write(3, b'{"tampered": true}')\nos._exit(1)`)
  assert.deepEqual([r.status, r.stdout, r.exit_code], ['error', `${marker}\n`, 1], JSON.stringify(r))
  // Any other report a job writes is its own error with a well-formed `error` (an error without type and message
  // failed the response schema: the caller got infra_error).
  const odd = await run('import os\nos.write(3, b\'{"memory": 1, "message": {"a": 1}}\')\nos._exit(2)')
  assert.deepEqual(
    [odd.status, odd.exit_code, odd.error.type, odd.error.message],
    ['error', 2, 'ExitCode', "{'a': 1}"],
    JSON.stringify(odd)
  )
  await assertHealthy('forged tampered report')
})

test('a job that locks its files or /tmp against removal leaves the next job a clean, writable work dir', async () => {
  const attacks = [
    'import os\nos.makedirs("a/b")\nopen("a/b/secret", "w").write("s")\nos.chmod("a/b", 0o500)\nos.chmod("a", 0)\nos.chmod(".", 0o500)',
    'import os\nos.makedirs("/tmp/keep/in")\nopen("/tmp/keep/in/secret", "w").write("s")\nos.chmod("/tmp/keep/in", 0)\nos.chmod("/tmp/keep", 0o500)',
    'import os\nos.chmod("/tmp", 0o500)',
    'import os\nos.chmod("/dev/shm", 0)',
    'import os\nos.chdir("/tmp")\nfor _ in range(3000):\n    os.mkdir("d"); os.chdir("d")\nos.chmod(".", 0)\nos.chdir("/tmp/work")\nfor _ in range(3000):\n    os.mkdir("e"); os.chdir("e")'
  ]
  for (const attack of attacks) {
    const r = await run(attack)
    assert.equal(r.status, 'ok', `${attack}: ${JSON.stringify(r)}`)
    const next = await run(
      'import os\nopen("mine", "w").write("x")\nprint(sorted(os.listdir(".")), sorted(os.listdir("/tmp")), os.listdir("/dev/shm"))'
    )
    assert.deepEqual(
      [next.status, next.stdout],
      ['ok', "['mine'] ['work'] []\n"],
      `after ${attack}: ${JSON.stringify(next)}`
    )
    await assertHealthy(attack)
  }
})

test("fetch_files through links out of the work dir (into the controller's own /proc) returns nothing and crashes nothing", async () => {
  const r = await run(
    'import os\nos.symlink("/proc/self", "me")\nos.symlink("/proc/self/environ", "env")\nos.mkfifo("fifo")\nopen("real.txt", "w").write("mine")',
    { fetch_files: ['me/mem', 'me/environ', 'env', 'me/maps', 'fifo', 'real.txt', 'missing'] }
  )
  assert.equal(r.status, 'ok', JSON.stringify(r))
  assert.deepEqual(Object.keys(r.files), ['real.txt'])
  assert.equal(Buffer.from(r.files['real.txt'], 'base64').toString(), 'mine')
  assert.deepEqual(
    Object.keys(r.fetch_errors ?? {}).sort(),
    ['env', 'fifo', 'me/environ', 'me/maps', 'me/mem', 'missing'],
    JSON.stringify(r.fetch_errors)
  )
  await assertHealthy('fetch through links')
})

test('a job cannot make a user namespace of its own (every capability in it: mounts, netfilter)', async () => {
  const r = await run(
    'import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.unshare(0x10000000), ctypes.get_errno() != 0)\nimport os\nprint(os.system("unshare -U -r true 2>/dev/null") != 0)'
  )
  assert.deepEqual([r.status, r.stdout], ['ok', '-1 True\nTrue\n'], JSON.stringify(r))
  await assertHealthy('userns')
})

test('the seccomp filter: keyrings, bpf, perf events, userfaultfd, io_uring, mounts, ptrace are EPERM; a call through another ABI is killed', async () => {
  const names = [
    'bpf',
    'keyctl',
    'add_key',
    'perf_event_open',
    'userfaultfd',
    'io_uring_setup',
    'mount',
    'unshare',
    'ptrace',
    'pidfd_getfd',
    'process_vm_readv'
  ] as const
  const table = SYSCALL_TABLES[process.arch]
  assert.ok(table !== undefined, `no system call table for ${process.arch}`)
  const calls = names.map((n) => `(${JSON.stringify(n)}, ${String(table.numbers[n])})`).join(', ')
  const r = await run(`import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, nr in (${calls},):
    ctypes.set_errno(0)
    print(name, libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno())
print(os.getpid() > 0, os.listdir('.'))
print(sorted(l.split()[1] for l in open('/proc/self/status') if l.startswith(('NoNewPrivs:', 'Seccomp:', 'CapBnd:'))))`)
  assert.deepEqual(
    [r.status, r.stdout],
    ['ok', `${names.map((n) => `${n} -1 1\n`).join('')}True []\n['0000000000000000', '1', '2']\n`],
    JSON.stringify(r)
  )
  if (process.arch === 'x64') {
    // i386's getpid through int 0x80, from a page of machine code: another ABI's entry, killed (SIGSYS)
    const i386 = await run(`import ctypes, mmap
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(bytes.fromhex('b814000000cd80c3'))  # mov eax, 20; int 0x80; ret
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print('calling', flush=True)
print(call())`)
    // SIGSEGV where the kernel has no ia32 emulation at all (no such entry: the call cannot run either)
    assert.deepEqual([i386.status, i386.stdout], ['killed', 'calling\n'], JSON.stringify(i386))
    assert.ok(['SIGSYS', 'SIGSEGV'].includes(i386.error?.type), JSON.stringify(i386))
  }
  await assertHealthy('seccomp')
})

test('a job that replaces os._exit, os.write, json.dumps or traceback still gets its own status and error', async () => {
  const exited = await run('import os\nos._exit = None\nprint("hi")')
  assert.deepEqual([exited.status, exited.stdout, exited.exit_code], ['ok', 'hi\n', 0], JSON.stringify(exited))
  const raised = await run(
    'import os, json, traceback\nos.write = json.dumps = traceback.format_exception = None\nraise ValueError("mine")'
  )
  assert.deepEqual(
    [raised.status, raised.error?.type, raised.error?.message],
    ['error', 'ValueError', 'mine'],
    JSON.stringify(raised)
  )
  await assertHealthy('replaced os._exit')
})

test('a streamed batch of hostile and plain items answers every item, in order, each with its own status', async () => {
  const items = [
    ['print("a")', 'ok'],
    ['while True: pass', 'timeout'],
    ['import os\nos.kill(os.getppid(), 9)', 'killed'],
    ['print("b")', 'ok'],
    ['import ctypes\nctypes.string_at(0)', 'killed'],
    ['x = b"y" * (1 << 40)', 'memory'],
    ['print("c")', 'ok'],
    ['raise KeyError(1)', 'error']
  ]
  const res = await fetch(`${fleet.url}/v1/execute/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify({ requests: items.map(([code]) => ({ code, timeout_ms: 500, memory_mb: 128 })) })
  })
  const lines = (await res.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const byIndex = new Map(lines.map((l) => [l.index, l.result]))
  assert.deepEqual(
    items.map((_, i) => byIndex.get(i)?.status),
    items.map(([, status]) => status),
    JSON.stringify(lines.map((l) => [l.index, l.result.status, l.result.error]))
  )
  assert.deepEqual(
    [0, 3, 6].map((i) => byIndex.get(i).stdout),
    ['a\n', 'b\n', 'c\n']
  )
  await assertHealthy('hostile batch')
})
