/**
 * The hostile corpus: one table of named cases, each a snippet of hostile Python and the statuses
 * it may end in on each backend (process = bubblewrap, docker, pyodide). Pyodide is one wasm
 * interpreter with no processes, no signals to other processes, no ctypes and no sockets: a case
 * that needs them is an `error` there, and the table says so per case. `check` asserts what the
 * result must hold beyond its status (output, truncation, error type).
 */
import assert from 'node:assert/strict'
import type { ExecResult, Status } from '@sandfleet/protocol'
import { PTRACE_PROBE } from '../../services/runner/test/helpers/ptrace-probe.ts'

/** The Python backends the corpus runs on. */
export const CORPUS_BACKENDS = ['process', 'docker', 'pyodide'] as const
export type CorpusBackend = (typeof CORPUS_BACKENDS)[number]

/** What a case may use of the test around it. */
export interface CorpusContext {
  backend: CorpusBackend
  /** A listener on the host's 127.0.0.1 that no sandbox may reach. */
  port: number
  /** Connections the listener accepted so far. */
  accepted: () => number
  /** Name of a file in the host's /tmp; no sandbox may see it. */
  hostMarker: string
  /** The runner's secret, in the runner's environment; no sandbox may see it. */
  secret: string
}

export interface HostileCase {
  name: string
  code: string | ((ctx: CorpusContext) => string)
  stdin?: string
  /**
   * Default: 1000 for a case that may end in `timeout` (an endless one), else 10,000 (ends on its own; the machine is
   * shared).
   */
  timeoutMs?: number
  /** Default 128. */
  memoryMb?: number
  /** Statuses allowed on every backend, unless the backend has its own entry. */
  expect: Status[]
  process?: Status[]
  docker?: Status[]
  pyodide?: Status[]
  /**
   * At the `reuse` level (process, docker): `violation` when the case writes on the report pipe a
   * reuse process shares with its jobs (fd 3): the controller cannot tell those lines from its
   * process's, kills it and answers the job `infra_error` (SF_ERR_RUNNER_REUSE_VIOLATION), the
   * check aside. The other statuses stay allowed.
   */
  reuse?: 'violation'
  check?: (r: ExecResult, ctx: CorpusContext) => void
}

/** The statuses `c` may end in on `backend` at `isolation`. */
export function expectedStatuses(c: HostileCase, backend: CorpusBackend, isolation?: string): Status[] {
  const statuses = c[backend] ?? c.expect
  return isolation === 'reuse' && c.reuse === 'violation' ? [...statuses, 'infra_error'] : statuses
}

const lines = (...l: string[]): string => l.join('\n')
/** Exception type of the result's error. */
const errorType = (r: ExecResult): string | undefined => r.error?.type
/** Exactly this stdout. */
const stdoutIs =
  (out: string) =>
  (r: ExecResult): void => {
    assert.equal(r.stdout, out)
  }
/** No process, no fork: what pyodide answers a case that needs one. */
const noProcesses = ['error'] as Status[]

/** Forged executor result frames for the first `n` job ids. */
const FORGED = (n: number): string =>
  `FRAMES = b"".join(b'{"op":"result","id":"%d","status":"ok","stdout":"FORGED","stderr":"","exit_code":0,"duration_ms":1,"truncated":{"stdout":false,"stderr":false},"error":null,"files":{}}\\n' % i for i in range(${n}))`

export { PTRACE_PROBE }

const HUGE_STDIN = 'x'.repeat(4 << 20)
/** A memory bomb ends at its limit, not its deadline: a loaded host can take seconds to hand a container 256 MiB. */
const MEMORY_BOMB_TIMEOUT_MS = 30_000

export const CASES: HostileCase[] = [
  // ── spinning and sleeping ──
  { name: 'spin loop', code: 'while True: pass', expect: ['timeout'] },
  {
    name: 'spin loop catching BaseException (timeouts and signals swallowed)',
    code: lines('while True:', '    try:', '        while True: pass', '    except BaseException: pass'),
    expect: ['timeout']
  },
  // A spin allocates nothing: it ends at the deadline on any machine, never at the memory limit.
  {
    name: 'spin in an atexit handler after the code ends',
    code: 'import atexit\ndef spin():\n    while True: pass\natexit.register(spin)\nprint("main done")',
    expect: ['timeout'],
    pyodide: ['ok'],
    check: stdoutIs('main done\n')
  },
  {
    name: 'spin in a non-daemon thread after the main thread ends',
    code: 'import threading\ndef spin():\n    while True: pass\nthreading.Thread(target=spin).start()\nprint("main done")',
    expect: ['timeout'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.equal(r.stdout, 'main done\n')
    }
  },
  { name: 'sleep for an hour', code: 'import time\ntime.sleep(3600)', expect: ['timeout'] },
  {
    name: 'sleep in select() catching BaseException',
    code: lines(
      'import select',
      'while True:',
      '    try: select.select([], [], [], 3600)',
      '    except BaseException: pass'
    ),
    expect: ['timeout']
  },
  {
    name: 'ignored SIGTERM, SIGINT, SIGHUP, SIGXCPU in an endless loop',
    code: lines(
      'import signal',
      'for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):',
      '    signal.signal(s, signal.SIG_IGN)',
      'while True: pass'
    ),
    expect: ['timeout']
  },
  // ── bombs ──
  {
    name: 'fork bomb',
    code: lines('import os', 'while True:', '    try: os.fork()', '    except OSError: pass'),
    expect: ['timeout']
  },
  {
    name: 'thread bomb: a thousand threads',
    code: 'import threading, time\nts = [threading.Thread(target=time.sleep, args=(5,), daemon=True) for _ in range(1000)]\nfor t in ts: t.start()\nprint("all started")',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'RuntimeError')
    }
  },
  // A 32-bit interpreter: the size does not fit an index (OverflowError).
  { name: 'memory bomb: one huge allocation', code: 'x = b"y" * (1 << 40)', expect: ['memory'], pyodide: ['error'] },
  {
    name: 'memory bomb: growing list',
    code: 'hold = []\nwhile True: hold.append(bytearray(16 << 20))',
    memoryMb: 64,
    timeoutMs: MEMORY_BOMB_TIMEOUT_MS,
    expect: ['memory']
  },
  {
    name: "memory bomb across forked processes (past the sandbox's 256 MiB)",
    code: lines(
      'import os, time',
      'for _ in range(3):',
      '    if os.fork() == 0:',
      '        try: hold = b"x" * (64 << 20); time.sleep(30)',
      '        finally: os._exit(0)',
      'hold = []',
      'while True: hold.append(b"y" * (10 << 20))'
    ),
    timeoutMs: MEMORY_BOMB_TIMEOUT_MS,
    expect: ['memory'],
    pyodide: noProcesses
  },
  {
    name: 'deep recursion',
    code: 'def f(n): return f(n + 1)\nf(0)',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'RecursionError')
    }
  },
  // Through C (map) each level takes C stack: the process overflows its stack (SIGSEGV); pyodide's interpreter stops
  // with a fatal error.
  {
    name: 'deep recursion through C past a raised recursion limit',
    code: 'import sys\nsys.setrecursionlimit(10 ** 7)\ndef f(n): return next(map(f, [n + 1]))\nf(0)',
    expect: ['killed'],
    pyodide: ['error']
  },
  // ── output ──
  {
    name: 'stdout flood from print',
    code: 'import sys\nline = "x" * 1023\nfor _ in range(20000): print(line)\nprint("end", file=sys.stderr)',
    expect: ['ok'],
    check: (r) => {
      assert.deepEqual([r.truncated, r.stdout.length, r.stderr], [{ stdout: true, stderr: false }, 65536, 'end\n'])
    }
  },
  {
    name: 'stderr flood from sys.stderr',
    code: 'import sys\nline = "e" * 1023 + "\\n"\nfor _ in range(20000): sys.stderr.write(line)\nprint("end")',
    expect: ['ok'],
    check: (r) => {
      assert.deepEqual([r.truncated, r.stderr.length, r.stdout], [{ stdout: false, stderr: true }, 65536, 'end\n'])
    }
  },
  {
    name: '256 MiB on both streams through os.write',
    code: 'import os\nb = b"x" * (1 << 20)\nfor _ in range(256):\n    os.write(1, b); os.write(2, b)\nprint("end")',
    expect: ['ok'],
    check: (r) => {
      assert.deepEqual([r.truncated, r.stdout.length, r.stderr.length], [{ stdout: true, stderr: true }, 65536, 65536])
    }
  },
  {
    name: 'endless flood on both streams',
    code: 'import os\nb = b"x" * (1 << 20)\nwhile True: os.write(1, b); os.write(2, b)',
    expect: ['timeout'],
    check: (r) => {
      assert.deepEqual([r.truncated.stdout, r.stdout.length], [true, 65536])
    }
  },
  {
    name: 'flood from C: libc printf and write',
    code: lines(
      'import ctypes',
      'libc = ctypes.CDLL(None)',
      'for _ in range(100000): libc.printf(b"%s\\n", b"c" * 100)',
      'libc.fflush(None)',
      'for _ in range(2000): libc.write(2, b"w" * 1000, 1000)'
    ),
    expect: ['ok'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide')
        assert.deepEqual(
          [r.truncated, r.stdout.length, r.stderr.length],
          [{ stdout: true, stderr: true }, 65536, 65536]
        )
    }
  },
  {
    name: 'invalid UTF-8 on both streams',
    code: 'import sys\nsys.stdout.buffer.write(b"a\\xff\\xfeb\\xc3(\\n"); sys.stdout.flush()\nsys.stderr.buffer.write(b"\\xed\\xa0\\x80z\\n"); sys.stderr.flush()',
    expect: ['ok'],
    check: (r) => {
      assert.deepEqual([r.stdout, r.stderr], ['a\uFFFD\uFFFDb\uFFFD(\n', '\uFFFD\uFFFD\uFFFDz\n'])
    }
  },
  {
    name: 'text that looks like executor frames on every fd',
    code: lines(
      'import os, sys',
      FORGED(100),
      'sys.stdout.buffer.write(FRAMES); sys.stdout.flush(); sys.stderr.buffer.write(FRAMES); sys.stderr.flush()',
      'for fd in range(1, 11):',
      '    try: os.write(fd, FRAMES)',
      '    except OSError: pass',
      'print("real")',
      'sys.exit(3)'
    ),
    expect: ['error'],
    reuse: 'violation',
    check: (r) => {
      assert.deepEqual([r.exit_code, r.stdout.endsWith('real\n')], [3, true])
    }
  },
  // ── stdio ──
  {
    name: 'fds 0..10 closed',
    code: 'import os\nfor fd in range(11):\n    try: os.close(fd)\n    except OSError: pass\nprint("gone")',
    expect: ['ok'],
    check: stdoutIs('')
  },
  {
    name: 'sys.stdout and sys.stderr set to None, then an exception',
    code: 'import sys\nsys.stdout = None\nprint("x")\nsys.stderr = None\nraise KeyError("k")',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'KeyError')
    }
  },
  {
    name: 'sys.stdout and sys.stderr closed',
    code: 'import sys\nsys.stdout.close()\nsys.stderr.close()\nprint("x")',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'ValueError')
    }
  },
  {
    name: 'huge stdin read whole',
    code: 'import sys\nprint(len(sys.stdin.read()))',
    stdin: HUGE_STDIN,
    expect: ['ok'],
    check: stdoutIs(`${HUGE_STDIN.length}\n`)
  },
  {
    name: 'huge stdin never read',
    code: 'print("ignored")',
    stdin: HUGE_STDIN,
    expect: ['ok'],
    check: stdoutIs('ignored\n')
  },
  // ── processes that try to outlive the job ──
  {
    name: 'double-forked setsid grandchild writing and filing',
    code: lines(
      'import os, time',
      'if os.fork() == 0:',
      '    os.setsid()',
      '    if os.fork() == 0:',
      '        for _ in range(500):',
      '            for fd in (1, 2):',
      '                try: os.write(fd, b"LEAK\\n")',
      '                except OSError: pass',
      '            try: open("/tmp/leak-%d" % os.getpid(), "w").write("x")',
      '            except OSError: pass',
      '            time.sleep(0.01)',
      '    os._exit(0)',
      'time.sleep(0.05)',
      'print("parent done")'
    ),
    expect: ['ok'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.match(r.stdout, /parent done\n/)
    }
  },
  {
    name: 'a detached daemon sleeping forever',
    code: 'import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.closerange(0, 100)\n    time.sleep(3600)\nprint("bye")',
    expect: ['ok'],
    pyodide: noProcesses
  },
  {
    name: 'a child ignoring SIGTERM, in its own process group',
    code: 'import os, signal, time\nif os.fork() == 0:\n    os.setpgid(0, 0)\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    time.sleep(3600)\nprint("bye")',
    expect: ['ok'],
    pyodide: noProcesses
  },
  {
    name: 'a subprocess left running',
    code: 'import subprocess\nsubprocess.Popen(["sleep", "3600"])\nprint("bye")',
    expect: ['ok'],
    pyodide: noProcesses
  },
  {
    name: 'exec into another program',
    code: 'import os\nos.execv("/bin/sh", ["sh", "-c", "echo from-sh; sleep 3600"])',
    expect: ['timeout'],
    pyodide: noProcesses
  },
  // ── signals at the sandbox's own processes ──
  {
    name: 'kill its parent (the zygote)',
    code: 'import os, time\nos.kill(os.getppid(), 9)\ntime.sleep(0.2)\nprint("after")',
    expect: ['killed', 'ok'],
    pyodide: noProcesses
  },
  { name: 'kill pid 1', code: 'import os\nos.kill(1, 9)\nprint("pid 1 lives")', expect: ['ok'], pyodide: noProcesses },
  { name: 'kill its own process group', code: 'import os\nos.killpg(0, 9)', expect: ['killed'], pyodide: noProcesses },
  {
    name: 'kill every process it can see',
    code: 'import os, time\nfor p in os.listdir("/proc"):\n    if p.isdigit() and int(p) != os.getpid():\n        try: os.kill(int(p), 9)\n        except OSError: pass\ntime.sleep(0.2)',
    expect: ['killed'],
    pyodide: ['ok'] // its /proc lists itself only
  },
  // Pyodide's os.kill of itself is a no-op.
  {
    name: 'SIGSTOP to itself',
    code: 'import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)',
    timeoutMs: 500,
    expect: ['timeout'],
    pyodide: ['ok']
  },
  {
    name: 'SIGSTOP to the controller',
    code: 'import os, signal\nz = os.getppid()\nc = int(open("/proc/%d/stat" % z).read().rsplit(")", 1)[1].split()[1])\nos.kill(c, signal.SIGSTOP)\nwhile True: pass',
    timeoutMs: 500,
    expect: ['timeout'],
    pyodide: noProcesses
  },
  {
    name: 'segfault through ctypes',
    code: 'import ctypes\nctypes.string_at(0)',
    expect: ['killed'],
    pyodide: ['ok'],
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.equal(errorType(r), 'SIGSEGV')
    }
  }, // wasm: address 0 is readable
  { name: 'abort()', code: 'import os\nos.abort()', expect: ['killed'], pyodide: noProcesses },
  // ── files ──
  // The executor's RLIMIT_FSIZE on process and docker, a cap on the in-memory file system on pyodide: the same OSError.
  {
    name: 'a huge file past the file size limit',
    code: 'with open("big", "wb") as f:\n    for _ in range(1024): f.write(b"x" * (1 << 20))',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'OSError')
    }
  },
  // A full tmpfs (process, docker: the sandbox's memory cgroup) or pyodide's quota on a job's files: an OSError, or the
  // memory limit.
  {
    name: 'filling /tmp',
    code: 'chunk = b"x" * (8 << 20)\nfor i in range(1000):\n    with open("/tmp/fill-%d" % i, "wb") as f: f.write(chunk)',
    expect: ['error', 'memory'],
    pyodide: ['error'],
    check: (r) => {
      if (r.status === 'error') assert.equal(errorType(r), 'OSError')
    }
  },
  {
    name: 'files left in /mnt, /dev/shm, /dev, /proc and /',
    code: lines(
      'import os',
      'for d in ("/mnt", "/dev/shm", "/dev", "/proc", "/"):',
      '    try: open(os.path.join(d, "leak"), "w").write("x")',
      '    except OSError: pass',
      'print("left")'
    ),
    expect: ['ok'],
    check: stdoutIs('left\n')
  },
  {
    name: 'files left in /tmp, /dev/shm and the work dir, locked against removal',
    code: lines(
      'import os',
      'os.makedirs("a/b")',
      'open("a/b/secret", "w").write("s")',
      'os.chmod("a/b", 0o500)',
      'os.chmod("a", 0)',
      'os.makedirs("/tmp/keep/in")',
      'open("/tmp/keep/in/secret", "w").write("s")',
      'os.chmod("/tmp/keep/in", 0)',
      'os.chmod("/tmp/keep", 0o500)',
      'for d in ("/dev/shm", "/dev/mqueue"):',
      '    try: open(d + "/leak", "w").write("x")',
      '    except OSError: pass',
      'print("left")'
    ),
    expect: ['ok'],
    check: stdoutIs('left\n')
  },
  // ── the host ──
  {
    name: "host files: /etc/shadow, a file the test put in the host's /tmp, the host's home and work dirs",
    code: (ctx) =>
      lines(
        'import glob, os',
        'seen = []',
        'try: seen.append(("shadow", "root:" in open("/etc/shadow").read()))',
        'except OSError: pass',
        `seen += glob.glob("/tmp/${ctx.hostMarker}") + glob.glob("/proc/*/root/tmp/${ctx.hostMarker}") + glob.glob("/*/${ctx.hostMarker}")`,
        'for d in ("/root", "/home", "/work", "/var/lib/docker"):',
        '    try: seen += sorted(os.path.join(d, n) for n in os.listdir(d))',
        '    except OSError: pass',
        'print(seen, os.path.exists("/run/docker.sock"), os.path.exists("/var/run/docker.sock"))'
      ),
    expect: ['ok'],
    // pyodide's own file system has an empty home of its user
    check: (r, ctx) => {
      assert.equal(
        r.stdout,
        `${ctx.backend === 'pyodide' ? "['/home/pyodide', '/home/web_user']" : '[]'} False False\n`
      )
    }
  },
  {
    name: "the runner's secret in the environment, /proc/1/environ or any process's",
    code: (ctx) =>
      lines(
        'import os, glob',
        `secret = ${JSON.stringify(ctx.secret)}`,
        'found = [k for k, v in os.environ.items() if secret in v]',
        'for p in ["/proc/1/environ", "/proc/self/environ"] + glob.glob("/proc/*/environ"):',
        '    try:',
        '        if secret.encode() in open(p, "rb").read(): found.append(p)',
        '    except OSError: pass',
        'print(found, [k for k in os.environ if k.startswith("SANDFLEET_RUNNER")])'
      ),
    expect: ['ok'],
    check: stdoutIs('[] []\n')
  },
  {
    name: "network: a connection to a listener on the host's 127.0.0.1",
    code: (ctx) =>
      `import socket\ns = socket.socket()\ns.settimeout(0.5)\ns.connect(("127.0.0.1", ${ctx.port}))\nprint("connected")`,
    expect: ['error'],
    check: (r, ctx) => {
      assert.equal(ctx.accepted(), 0, 'the host listener was reached')
      assert.equal(r.stdout, '')
    }
  },
  // ── privileges ──
  {
    name: 'ptrace, /proc/PID/mem and process_vm_readv of every process',
    code: PTRACE_PROBE,
    expect: ['ok'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.equal(r.stdout, 'done\n')
    }
  },
  {
    name: 'mount, unshare and setns',
    code: lines(
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'got = []',
      'if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0: got.append("mount")',
      'for flag in (0x10000000, 0x20000000, 0x00020000, 0x40000000, 0x08000000): ',
      '    if libc.unshare(flag) == 0: got.append("unshare %x" % flag)',
      'for ns in ("mnt", "pid", "net", "user", "uts", "ipc", "cgroup"):',
      '    try: fd = os.open("/proc/1/ns/" + ns, os.O_RDONLY)',
      '    except OSError: continue',
      '    if libc.setns(fd, 0) == 0: got.append("setns " + ns)',
      'print(got)'
    ),
    expect: ['ok'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.equal(r.stdout, '[]\n')
    }
  },
  {
    name: 'rlimits raised back',
    code: lines(
      'import resource',
      'raised = []',
      'for name in ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CPU"):',
      '    r = getattr(resource, name)',
      '    soft, hard = resource.getrlimit(r)',
      '    if hard == resource.RLIM_INFINITY: continue',
      '    try: resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)); raised.append(name)',
      '    except (ValueError, OSError): pass',
      'print(raised)'
    ),
    expect: ['ok'],
    pyodide: noProcesses,
    check: (r, ctx) => {
      if (ctx.backend !== 'pyodide') assert.equal(r.stdout, '[]\n')
    }
  },
  // ── state for the next job ──
  {
    name: 'patched builtins, modules, sys.path, env and cwd',
    code: lines(
      'import builtins, os, sys, json',
      'builtins.len = lambda x: -1',
      'builtins.open = None',
      'json.dumps = lambda *a, **k: "patched"',
      'os.environ["SANDFLEET_LEAK"] = "1"',
      'os.putenv("SANDFLEET_PUTENV", "1")',
      'sys.path.insert(0, "/tmp")',
      'sys.modules["leaky"] = type(sys)("leaky")',
      'os.chdir("/")',
      'builtins.print = lambda *a, **k: None',
      'print("hidden")'
    ),
    expect: ['ok'],
    check: stdoutIs('')
  },
  {
    name: 'a module planted on sys.path for the next job',
    code: 'import os\nfor d in ("/tmp", "."):\n    try: open(os.path.join(d, "hashlib.py"), "w").write("raise SystemExit(99)")\n    except OSError: pass\nprint("planted")',
    expect: ['ok'],
    check: stdoutIs('planted\n')
  },
  {
    name: 'every signal handler replaced, then an exception',
    code: lines(
      'import signal',
      'n = 0',
      'for s in signal.valid_signals():',
      '    try: signal.signal(s, signal.SIG_IGN); n += 1',
      '    except (OSError, ValueError, RuntimeError): pass',
      'print(n > 20)',
      'raise LookupError("after")'
    ),
    expect: ['error'],
    check: (r) => {
      assert.deepEqual([r.stdout, errorType(r)], ['True\n', 'LookupError'])
    }
  },
  {
    name: 'os._exit, os.write, json.dumps and traceback replaced, then an exception',
    code: 'import os, json, traceback\nos._exit = os.write = json.dumps = traceback.format_exception = None\nraise ValueError("mine")',
    expect: ['error'],
    check: (r) => {
      assert.deepEqual([errorType(r), r.error?.message], ['ValueError', 'mine'])
    }
  },
  { name: 'SystemExit with a megabyte message', code: 'raise SystemExit("m" * (1 << 20))', expect: ['error'] },
  {
    name: 'KeyboardInterrupt raised by the code',
    code: 'raise KeyboardInterrupt',
    expect: ['error'],
    check: (r) => {
      assert.equal(errorType(r), 'KeyboardInterrupt')
    }
  }
]
