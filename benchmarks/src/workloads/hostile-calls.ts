/**
 * Hostile tool calls, as a policy in training writes them by mistake or on purpose: runaways,
 * bombs, floods, signals, escapes and pollution. Each ends in a status of its own (`timeout`,
 * `memory`, `killed`, `error`, or `ok` when the sandbox makes it harmless), and the calls after it
 * must not notice: the soak (`sandfleet bench soak --workload rl-hostile`) mixes them into the RL
 * mix and checks every neighbour's output. Where the end is a race (a memory bomb may hit the
 * deadline before the limit on a loaded machine), `accept` lists the other statuses that are right.
 */
/** A hostile call and the answer it must get (a bench call with a name). */
export interface HostileCall {
  name: string
  code: string
  timeoutMs: number
  status: string
  /** Other statuses that are right too. */
  accept?: readonly string[]
  /** The stdout it must come back with; undefined: not checked. */
  stdout?: string
}

/** Deadline of the hostile calls: short, so a soak spends its time on the mix around them. */
export const HOSTILE_TIMEOUT_MS = 1000

const call = (
  name: string,
  code: string,
  status: string,
  more: Pick<HostileCall, 'accept' | 'stdout'> = {}
): HostileCall => ({ name, code, status, timeoutMs: HOSTILE_TIMEOUT_MS, ...more })

/** The hostile calls. */
export const HOSTILE_CALLS: readonly HostileCall[] = [
  call(
    'spin catching BaseException',
    'while True:\n    try:\n        while True: pass\n    except BaseException: pass',
    'timeout'
  ),
  call('fork bomb', 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass', 'timeout', {
    accept: ['memory', 'killed']
  }),
  call(
    'thread bomb',
    'import threading, time\nfor _ in range(100000): threading.Thread(target=time.sleep, args=(10,), daemon=True).start()',
    'timeout',
    { accept: ['error', 'memory'] }
  ),
  call('memory bomb', "a = []\nwhile True: a.append(' ' * 10**7)", 'memory', { accept: ['timeout'] }),
  call('one huge allocation', 'x = bytearray(1 << 34)', 'memory'),
  call('stdout flood', "import sys\nwhile True: sys.stdout.write('x' * 65536)", 'timeout'),
  call('stderr flood below Python', "import os\nwhile True: os.write(2, b'y' * 65536)", 'timeout'),
  call('sleep past the deadline', 'import time\ntime.sleep(60)', 'timeout'),
  call(
    'SIGTERM ignored in a loop',
    'import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: pass',
    'timeout'
  ),
  call('SIGSTOP to itself', 'import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)', 'timeout'),
  call('kills its parent', "import os, time\nos.kill(os.getppid(), 9)\ntime.sleep(0.5)\nprint('after')", 'killed'),
  call('kills its process group', 'import os\nos.killpg(0, 9)', 'killed'),
  call('segfault', 'import ctypes\nctypes.string_at(0)', 'killed'),
  call(
    'setsid double-fork survivor',
    "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(30)\n    os._exit(0)\nos.wait()\nprint('parent')",
    'ok',
    { stdout: 'parent\n' }
  ),
  call(
    'patches builtins and modules',
    "import builtins, math, sys\nbuiltins.print = None\nbuiltins.int = str\nmath.pi = 3\nsys.modules['fractions'] = None\nraise SystemExit(0)",
    'ok',
    { stdout: '' }
  ),
  call('fills /tmp', "f = open('/tmp/fill', 'wb')\nwhile True: f.write(b'x' * (1 << 20))", 'error', {
    accept: ['timeout']
  }),
  call(
    'reads host secrets from its environment',
    "import os\nprint(sorted(k for k in os.environ if any(w in k for w in ('SECRET', 'TOKEN', 'PASSWORD', 'API_KEY'))))",
    'ok',
    { stdout: '[]\n' }
  ),
  call('closes its stdio', "import os\nos.close(1)\nos.close(2)\nprint('gone')", 'ok', { stdout: '' }),
  call('writes invalid UTF-8', "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe(ok\\n')", 'ok', {
    stdout: '\ufffd\ufffd(ok\n'
  })
]
