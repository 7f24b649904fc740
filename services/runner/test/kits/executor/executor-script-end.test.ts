/**
 * A job ends as `python3 main.py` would end (executor.py on a real process sandbox): non-daemon
 * threads joined, atexit handlers run, multiprocessing children waited for and their output kept,
 * all within the job's deadline; on a timeout, what the job printed is kept; tracebacks name a
 * script file and its lines.
 */
import { test as nodeTest, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ISOLATION_LEVELS, resolveExecRequest, type IsolationLevel } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { ProcessDriver } from '../../../src/backends/process/process-driver.ts'
import type { RunOutcome, Sandbox } from '../../../src/sandbox/contract.ts'

// Every test at each isolation level, each level's own driver and sandbox: the same results at both.
const sandboxes = new Map<IsolationLevel, { driver: ProcessDriver; sandbox: Sandbox }>()
before(async () => {
  for (const isolation of ISOLATION_LEVELS) {
    const driver = new ProcessDriver({ config: runnerConfig({ isolation }), logger: silentLogger })
    await driver.check()
    const sandbox = driver.createSandbox(`executor-script-end-${isolation}`)
    sandboxes.set(isolation, { driver, sandbox })
    await sandbox.start()
  }
})
after(async () => {
  for (const { driver, sandbox } of sandboxes.values()) {
    await sandbox.close()
    await driver.close()
  }
})

type Run = (code: string, extra?: object) => Promise<RunOutcome>
function test(name: string, fn: (run: Run) => Promise<void>): void {
  for (const isolation of ISOLATION_LEVELS) {
    nodeTest(`${name} (${isolation})`, async () => {
      const { sandbox } = sandboxes.get(isolation)!
      await fn(
        async (code, extra = {}) =>
          await sandbox.execute({
            request: resolveExecRequest({ code, ...extra }, { isolation }),
            maxOutputBytes: 65536
          })
      )
    })
  }
}

test('a non-daemon thread is joined before the job ends, and its output is kept', async (run) => {
  const r = await run(
    'import threading, time\ndef late():\n    time.sleep(0.3)\n    print("thread done")\nthreading.Thread(target=late).start()\nprint("main done")'
  )
  assert.deepEqual([r.status, r.stdout], ['ok', 'main done\nthread done\n'], r.stderr)
})

test('atexit handlers run at the end of a job, after an exception and after sys.exit too', async (run) => {
  const plain = await run('import atexit\natexit.register(lambda: print("bye"))\nprint("hi")')
  assert.deepEqual([plain.status, plain.stdout], ['ok', 'hi\nbye\n'], plain.stderr)
  const raised = await run('import atexit\natexit.register(lambda: print("cleanup"))\nraise ValueError("x")')
  assert.deepEqual([raised.status, raised.stdout, raised.error?.type], ['error', 'cleanup\n', 'ValueError'])
  const exited = await run('import atexit, sys\natexit.register(lambda: print("cleanup"))\nsys.exit(3)')
  assert.deepEqual([exited.status, exited.exit_code, exited.stdout], ['error', 3, 'cleanup\n'])
})

test('multiprocessing children are waited for and their output is kept (Process without join, Pool)', async (run) => {
  const procs = await run(
    'from multiprocessing import Process\nimport time\ndef work(i):\n    time.sleep(0.1 * i)\n    print("child", i)\nfor i in range(3):\n    Process(target=work, args=(i,)).start()\nprint("parent")'
  )
  assert.equal(procs.status, 'ok', procs.stderr)
  assert.deepEqual(procs.stdout.split('\n').filter(Boolean).sort(), ['child 0', 'child 1', 'child 2', 'parent'])
  // close() and join(): a pool's terminate() (what `with Pool()` calls) races its own workers, in CPython itself
  // (python/cpython#96995, #78178), and hung the job now and then on a loaded machine.
  const pool = await run(
    'from multiprocessing import Pool\ndef sq(x):\n    return x * x\nif __name__ == "__main__":\n    p = Pool(2)\n    print(p.map(sq, range(6)))\n    p.close()\n    p.join()'
  )
  assert.deepEqual([pool.status, pool.stdout], ['ok', '[0, 1, 4, 9, 16, 25]\n'], pool.stderr)
})

test("a process the job forks has SIGTERM's default, as a script's children have: it dies of it even stuck in C", async (run) => {
  const r = await run(
    'import os, signal\npid = os.fork()\nif pid == 0:\n    os._exit(0 if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else 1)\n_, status = os.waitpid(pid, 0)\nprint(os.waitstatus_to_exitcode(status), signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)'
  )
  assert.deepEqual([r.status, r.stdout], ['ok', '0 False\n'], r.stderr)
})

test('waiting for threads and atexit stays within the deadline: a thread that never ends is a timeout', async (run) => {
  const r = await run(
    'import threading, time\nthreading.Thread(target=lambda: time.sleep(3600)).start()\nprint("started")',
    { timeout_ms: 1000 }
  )
  assert.equal(r.status, 'timeout')
  assert.equal(r.stdout, 'started\n')
})

test("on a timeout, output still in Python's buffer is kept", async (run) => {
  const busy = await run('print("before the loop")\nwhile True:\n    pass', { timeout_ms: 800 })
  assert.deepEqual([busy.status, busy.stdout], ['timeout', 'before the loop\n'])
  const sleeping = await run('import sys, time\nprint("a" * 100)\nsys.stderr.write("partial")\ntime.sleep(3600)', {
    timeout_ms: 800
  })
  assert.deepEqual([sleeping.status, sleeping.stdout, sleeping.stderr], ['timeout', 'a'.repeat(100) + '\n', 'partial'])
  const next = await run('print("the sandbox serves on")')
  assert.deepEqual([next.status, next.stdout], ['ok', 'the sandbox serves on\n'])
})

test("tracebacks name a script file and its line numbers, as a script's do; __file__ and sys.argv[0] are that file, inspect reads its source", async (run) => {
  const raised = await run('x = 1\ny = 0\nprint(x / y)')
  assert.equal(raised.status, 'error')
  const file = /File "([^"]+\.py)", line 3, in <module>\n {4}print\(x \/ y\)/.exec(raised.stderr)
  assert.ok(file !== null, raised.stderr)
  assert.ok(file[1]?.startsWith('/'), file[1])
  assert.equal(raised.error?.traceback?.includes(`File "${file[1]}", line 3`), true)
  const syntax = await run('a = 1\nint b = 2')
  assert.match(syntax.stderr, new RegExp(`File "${file[1]}", line 2\\n {4}int b = 2`))
  const self = await run(
    'import inspect, sys\ndef f():\n    return 1\nprint(__file__ == sys.argv[0] == f.__code__.co_filename, inspect.getsource(f).splitlines()[0])'
  )
  assert.deepEqual([self.status, self.stdout], ['ok', 'True def f():\n'], self.stderr)
})

test('a job that draws with matplotlib (Agg) writes a PNG and says nothing on stderr', async (run) => {
  const r = await run('import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig("plot.png")\nprint("drawn")', {
    timeout_ms: 120_000,
    fetch_files: ['plot.png']
  })
  assert.deepEqual([r.status, r.stdout, r.stderr], ['ok', 'drawn\n', ''])
  assert.equal(
    Buffer.from(r.files['plot.png'] ?? '', 'base64')
      .subarray(1, 4)
      .toString(),
    'PNG'
  )
})
