import { test as nodeTest } from 'node:test'
import assert from 'node:assert/strict'
import { ISOLATION_LEVELS, resolveExecRequest, type IsolationLevel } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { silentLogger } from '../../../src/logger.ts'
import { ProcessDriver } from '../../../src/backends/process/process-driver.ts'
import type { RunOutcome, Sandbox } from '../../../src/sandbox/contract.ts'

// Every test at each isolation level: the same results at both.
let level: IsolationLevel = 'fork'
function test(name: string, fn: () => Promise<void>): void {
  for (const isolation of ISOLATION_LEVELS)
    nodeTest(`${name} (${isolation})`, async () => {
      level = isolation
      await fn()
    })
}

async function withSandbox(
  fn: (run: (code: string, extra?: object) => Promise<RunOutcome>, sandbox: Sandbox) => Promise<void>
): Promise<void> {
  const isolation = level
  const driver = new ProcessDriver({ config: runnerConfig({ isolation }), logger: silentLogger })
  await driver.check()
  const sandbox = driver.createSandbox(`process-executor-test-${isolation}`)
  try {
    await sandbox.start()
    await fn(
      async (code, extra = {}) =>
        await sandbox.execute({
          request: resolveExecRequest({ code, ...extra }, { isolation }),
          maxOutputBytes: 65536
        }),
      sandbox
    )
  } finally {
    await sandbox.close()
    await driver.close()
  }
}

test('executor tiers: a numpy job runs forked from the sci zygote, a sympy job from sym (no numpy), a fractions job from std, a plain job from bare', async () => {
  await withSandbox(async (run) => {
    const plain = await run(
      'import sys, json; print("sympy" in sys.modules, "numpy" in sys.modules, "fractions" in sys.modules)'
    )
    assert.deepEqual([plain.status, plain.tier, plain.stdout], ['ok', 'bare', 'False False False\n'])
    const std = await run(
      'import sys\nfrom fractions import Fraction\nprint(Fraction(1, 3) + 1, "statistics" in sys.modules, "sympy" in sys.modules)'
    )
    assert.deepEqual([std.status, std.tier, std.stdout], ['ok', 'std', '4/3 True False\n'])
    const sym = await run(
      'import sympy, sys\nx = sympy.Symbol("x")\nprint(sympy.factor(x**4 - 1), "numpy" in sys.modules)'
    )
    assert.deepEqual([sym.status, sym.tier, sym.stdout], ['ok', 'sym', '(x - 1)*(x + 1)*(x**2 + 1) False\n'])
    const sci = await run(
      'import numpy, sympy, sys\nprint(numpy.arange(3).sum(), sympy.Integer(6) / 4, "scipy" in sys.modules)'
    )
    assert.deepEqual([sci.status, sci.tier, sci.stdout], ['ok', 'sci', '3 3/2 True\n'])
    const indirect = await run('import importlib\nprint(importlib.import_module("mpmath").mpf(1) + 1)')
    assert.deepEqual([indirect.status, indirect.tier, indirect.stdout], ['ok', 'sym', '2.0\n'])
  })
})

test('executor: no state leaks between jobs on either tier (global, monkey-patch, file in cwd and /tmp, env, cwd)', async () => {
  await withSandbox(async (run) => {
    for (const head of ['import os, json', 'import os, json, fractions', 'import os, json, sympy']) {
      const dirty = await run(
        `${head}\nx_leak = 1\njson.dumps = lambda *a, **k: "patched"\nopen("left.txt", "w").write("x")\nopen("/tmp/left-tmp.txt", "w").write("x")\nos.environ["LEAK"] = "1"\nos.mkdir("sub"); os.chdir("sub")\nprint(os.getcwd())`
      )
      assert.equal(dirty.status, 'ok', dirty.stderr)
      const clean = await run(
        `${head}\nprint("x_leak" in globals(), json.dumps(1), os.path.exists("left.txt"), os.path.exists("/tmp/left-tmp.txt"), "LEAK" in os.environ, os.getcwd() == ${JSON.stringify(dirty.stdout.trim())})`
      )
      assert.deepEqual(
        [clean.status, clean.tier, clean.stdout],
        ['ok', dirty.tier, 'False 1 False False False False\n']
      )
    }
  })
})

test('executor: random state differs between jobs forked from the same zygote (random, numpy)', async () => {
  await withSandbox(async (run) => {
    const a = await run('import random; print(random.random())')
    const b = await run('import random; print(random.random())')
    assert.equal(a.status, 'ok')
    assert.notEqual(a.stdout, b.stdout)
    const na = await run('import numpy; print(numpy.random.rand())')
    const nb = await run('import numpy; print(numpy.random.rand())')
    assert.equal(na.tier, 'sci')
    assert.notEqual(na.stdout, nb.stdout)
  })
})

test('executor: output of os.system, subprocess and C-level writes is captured', async () => {
  await withSandbox(async (run) => {
    const r = await run(
      'import os, subprocess, ctypes, sys\nos.system("echo from-system")\nsubprocess.run(["echo", "from-subprocess"])\nos.write(1, b"from-fd\\n")\nctypes.CDLL(None).printf(b"from-printf\\n")\nos.system("echo to-stderr >&2")'
    )
    assert.equal(r.status, 'ok', r.stderr)
    for (const line of ['from-system', 'from-subprocess', 'from-fd', 'from-printf'])
      assert.ok(r.stdout.includes(line + '\n'), `${line} in ${JSON.stringify(r.stdout)}`)
    assert.equal(r.stderr, 'to-stderr\n')
  })
})

test('executor: a file past the size limit is an error, not a crash; the sandbox keeps serving', async () => {
  await withSandbox(async (run) => {
    const big = await run('with open("big.bin", "wb") as f:\n    f.write(b"x" * (80 << 20))', { memory_mb: 512 })
    assert.equal(big.status, 'error')
    assert.equal(big.error?.type, 'OSError')
    assert.match(big.error?.message ?? '', /too large/i)
    const after = await run('print("still here")')
    assert.deepEqual([after.status, after.stdout], ['ok', 'still here\n'])
  })
})

test("executor: job limits (open files, file size, processes, oom_score_adj); job processes cannot read the zygote's memory", async () => {
  await withSandbox(async (run) => {
    const limits = await run(
      'import resource as r\nprint(r.getrlimit(r.RLIMIT_NOFILE)[0], r.getrlimit(r.RLIMIT_FSIZE)[0] >> 20, r.getrlimit(r.RLIMIT_NPROC)[0], open("/proc/self/oom_score_adj").read().strip())'
    )
    assert.deepEqual([limits.status, limits.stdout], ['ok', '1024 64 64 1000\n'])
    const mem = await run('import os\nopen("/proc/%d/mem" % os.getppid(), "rb")')
    assert.equal(mem.status, 'error')
    assert.equal(mem.error?.type, 'PermissionError')
  })
})

test("executor: a job that kills its zygote is answered killed with retire; that tier's jobs then run on the next one that fits", async () => {
  await withSandbox(async (run) => {
    const attack = await run('import sympy, os, time\nos.kill(os.getppid(), 9)\ntime.sleep(5)\nprint("still running")')
    assert.deepEqual(
      [attack.status, attack.error?.type, attack.retire, attack.tier, attack.stdout],
      ['killed', 'SF_ERR_EXECUTOR_ZYGOTE_EXITED', true, 'sym', '']
    )
    const next = await run('import sympy\nprint(sympy.factor(sympy.Symbol("x")**2 - 1))')
    assert.deepEqual([next.status, next.tier, next.stdout], ['ok', 'sci', '(x - 1)*(x + 1)\n'], 'sci has sympy too')
    const numpy = await run('import numpy, os, time\nos.kill(os.getppid(), 9)\ntime.sleep(5)')
    assert.deepEqual([numpy.status, numpy.error?.type, numpy.tier], ['killed', 'SF_ERR_EXECUTOR_ZYGOTE_EXITED', 'sci'])
    const last = await run('import sympy\nprint(sympy.Integer(6) / 4)')
    assert.deepEqual(
      [last.status, last.tier, last.stdout],
      ['ok', 'std', '3/2\n'],
      'with both gone, the import runs in the job'
    )
  })
})

nodeTest(
  'executor (reuse): a reuse process killed while idle is dropped; the job meant for it runs forked and the next ones reused again',
  async () => {
    level = 'reuse'
    await withSandbox(async (run) => {
      const std = 'import fractions\nprint(fractions.Fraction(1, 3))'
      const until = Date.now() + 60_000
      while ((await run(std)).isolation !== 'reuse') assert.ok(Date.now() < until, "std's reuse process never came")
      // A job on another tier (bare, forked: it names os.kill's module) kills every child of every zygote but itself.
      const killer = await run(
        [
          'import os, signal',
          'def ppid(p): return int(open("/proc/%d/stat" % p).read().rsplit(")", 1)[1].split()[1])',
          'me, controller = os.getpid(), ppid(os.getppid())',
          'zygotes = [p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if ppid(p) == controller]',
          'for p in map(int, filter(str.isdigit, os.listdir("/proc"))):',
          '    if p != me and ppid(p) in zygotes: os.kill(p, signal.SIGKILL)',
          'print("killed")'
        ].join('\n'),
        { isolation: 'fork' }
      )
      assert.deepEqual([killer.status, killer.stdout], ['ok', 'killed\n'], killer.stderr)
      const next = await run(std)
      assert.deepEqual([next.status, next.stdout], ['ok', '1/3\n'], JSON.stringify(next))
      while ((await run(std)).isolation !== 'reuse') assert.ok(Date.now() < until, 'no reuse process came back')
    })
  }
)
