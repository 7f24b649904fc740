import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeSessionId } from '@sandfleet/protocol'
import { runnerConfig } from '../../src/config.ts'
import { SessionHost, unsandboxedSessionHost } from '../../src/sessions/session-host.ts'

let host: SessionHost
before(async () => {
  // a cap of 1 MiB a stream: the output test below writes more than the runner's default
  host = new SessionHost({
    runnerId: 'runner-t',
    sweepMs: 50,
    config: runnerConfig({ maxSessionsPerKey: 3, maxOutputBytes: 1 << 20 })
  })
  await host.start()
})
after(async () => {
  await host.shutdown()
})

test('session state persists across 3 calls: variables, imports, functions, files', async () => {
  const s = await host.create({ ttl_s: 60 })
  assert.equal(decodeSessionId(s.session_id)?.runner, 'runner-t')
  await host.execute(s.session_id, {
    code: 'import math\nx = 40\ndef f(v): return v + 2\nopen("note.txt", "w").write("kept")'
  })
  const second = await host.execute(s.session_id, { code: 'x = f(x)\nprint(math.floor(x))' })
  assert.equal(second.stdout, '42\n')
  const third = await host.execute(s.session_id, { code: 'open("note.txt").read()' })
  assert.deepEqual(third.display, [{ 'text/plain': "'kept'" }])
  assert.equal(host.get(s.session_id).cells, 3)
  await host.close(s.session_id)
})

test('a cell ending in an expression returns its repr; an exception reports the user frames', async () => {
  const s = await host.create()
  assert.deepEqual((await host.execute(s.session_id, { code: 'y = [1, 2]\ny' })).display, [{ 'text/plain': '[1, 2]' }])
  const err = await host.execute(s.session_id, { code: '1/0' })
  assert.equal(err.status, 'error')
  assert.equal(err.error?.type, 'ZeroDivisionError')
  assert.match(err.stderr, /ZeroDivisionError/)
  await host.close(s.session_id)
})

test('a cell timeout kills only that cell: the state from before it survives', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 1' })
  const slow = await host.execute(s.session_id, { code: 'x = 99\nwhile True: pass', timeout_ms: 300 })
  assert.equal(slow.status, 'timeout')
  assert.deepEqual((await host.execute(s.session_id, { code: 'x' })).display, [{ 'text/plain': '1' }])
  await host.close(s.session_id)
})

test('a cell that passes its timeout keeps what it printed before, buffered or not', async () => {
  const s = await host.create()
  const slow = await host.execute(s.session_id, {
    code: 'import sys, time\nprint("partial")\nprint("no newline", end="")\nsys.stderr.write("err")\nwhile True: pass',
    timeout_ms: 300
  })
  assert.deepEqual([slow.status, slow.stdout, slow.stderr], ['timeout', 'partial\nno newline', 'err'])
  const ignoring = await host.execute(s.session_id, {
    code: 'import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint("kept")\nwhile True: pass',
    timeout_ms: 300
  })
  assert.deepEqual(
    [ignoring.status, ignoring.stdout],
    ['timeout', 'kept\n'],
    'the session writes through: nothing waits for a flush the cell could refuse'
  )
  await host.close(s.session_id)
})

test('at its deadline a cell gets the soft stop: its own SIGTERM handler prints, the output comes back, the session keeps its state', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'n = 7' })
  const code =
    'import signal, sys\nn = 8\ndef bye(*_):\n    print("Suicide from timeout.", flush=True)\n    sys.exit(1)\nsignal.signal(signal.SIGTERM, bye)\nprint("before", flush=True)\nwhile True: pass'
  const r = await host.execute(s.session_id, { code, timeout_ms: 500 })
  assert.deepEqual([r.status, r.stdout], ['timeout', 'before\nSuicide from timeout.\n'], JSON.stringify(r))
  const after = await host.execute(s.session_id, { code: 'n' })
  assert.deepEqual(after.display, [{ 'text/plain': '7' }], 'the state from before the cell')
  await host.close(s.session_id)
})

test('an idle session expires after its TTL', async () => {
  const s = await host.create({ ttl_s: 1 })
  await sleep(1300)
  assert.throws(() => host.get(s.session_id), { code: 'SF_ERR_SESSION_NOT_FOUND' })
})

test('a session whose process was killed answers session lost (410), never a fresh state', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 1' })
  await host.crash(s.session_id)
  await assert.rejects(host.execute(s.session_id, { code: 'x' }), {
    code: 'SF_ERR_SESSION_LOST',
    statusCode: 410,
    status: 'infra_error'
  })
  assert.throws(() => host.get(s.session_id), { code: 'SF_ERR_SESSION_LOST' })
})

test('the per-key session limit refuses one more', async () => {
  const ids = []
  for (let i = 0; i < 3; i++) ids.push((await host.create({}, 'k')).session_id)
  await assert.rejects(host.create({}, 'k'), { code: 'SF_ERR_SESSION_LIMIT', statusCode: 429 })
  for (const id of ids) await host.close(id)
})

test('a cell reads its stdin; the next cell has an empty stdin', async () => {
  const s = await host.create()
  const first = await host.execute(s.session_id, {
    code: 'a = input()\nb = input()\nprint(int(a) + int(b))',
    stdin: '40\n2\n'
  })
  assert.deepEqual([first.status, first.stdout], ['ok', '42\n'])
  const second = await host.execute(s.session_id, { code: 'import sys\nprint(repr(sys.stdin.read()), a)' })
  assert.deepEqual([second.status, second.stdout], ['ok', "'' 40\n"])
  await host.close(s.session_id)
})

test('output past the cap is cut and marked truncated; the session goes on', async () => {
  const small = new SessionHost({ runnerId: 'runner-cap', config: runnerConfig({ maxOutputBytes: 1000 }) })
  try {
    const s = await small.create()
    const r = await small.execute(s.session_id, {
      code: 'import sys\nprint("o" * 5000)\nsys.stderr.write("e" * 10)\nn = 1'
    })
    assert.deepEqual(
      [r.status, r.stdout.length, r.truncated, r.stderr],
      ['ok', 1000, { stdout: true, stderr: false }, 'eeeeeeeeee']
    )
    assert.deepEqual((await small.execute(s.session_id, { code: 'n + 1' })).display, [{ 'text/plain': '2' }])
  } finally {
    await small.shutdown()
  }
})

test('a cell whose process dies is reported killed and the session keeps the state from before it', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'k = "kept"' })
  const died = await host.execute(s.session_id, { code: 'import os\nk = "lost"\nos._exit(3)' })
  assert.deepEqual([died.status, died.exit_code], ['killed', 3])
  const killed = await host.execute(s.session_id, {
    code: 'import os, signal\nk = "lost"\nos.kill(os.getpid(), signal.SIGKILL)'
  })
  assert.equal(killed.status, 'killed')
  assert.deepEqual((await host.execute(s.session_id, { code: 'k' })).display, [{ 'text/plain': "'kept'" }])
  await host.close(s.session_id)
})

test('a timed-out cell does not leave its process behind, and many cells in a row keep one state', async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 0' })
  for (let i = 0; i < 30; i++) assert.equal((await host.execute(s.session_id, { code: 'x += 1' })).status, 'ok')
  const slow = await host.execute(s.session_id, { code: 'import time\nx = -1\ntime.sleep(30)', timeout_ms: 200 })
  assert.equal(slow.status, 'timeout')
  const r = await host.execute(s.session_id, { code: 'import os\nprint(x)' })
  assert.deepEqual([r.status, r.stdout], ['ok', '30\n'])
  await host.close(s.session_id)
})

test('files sent with a cell are written before it runs; fetch_files come back', async () => {
  const s = await host.create()
  const r = await host.execute(s.session_id, {
    code: 'data = open("in/a.txt").read()\nopen("out.txt", "w").write(data.upper())',
    files: { 'in/a.txt': Buffer.from('abc').toString('base64') },
    fetch_files: ['out.txt']
  })
  assert.equal(r.status, 'ok')
  assert.equal(Buffer.from(r.files?.['out.txt'] ?? '', 'base64').toString(), 'ABC')
  await host.close(s.session_id)
})

test('a cell that leaves a process running with its stdout open still answers at once', async () => {
  const s = await host.create()
  const t = performance.now()
  const r = await host.execute(s.session_id, {
    code: 'import subprocess\np = subprocess.Popen(["sleep", "30"])\nprint("started")',
    timeout_ms: 5000
  })
  assert.deepEqual([r.status, r.stdout], ['ok', 'started\n'])
  assert.ok(performance.now() - t < 4000, 'it did not wait for the background process')
  // still running (a later cell runs in a fork of the session, so it checks by signal 0, not by wait)
  assert.deepEqual((await host.execute(s.session_id, { code: 'import os\nos.kill(p.pid, 0)\n"alive"' })).display, [
    { 'text/plain': "'alive'" }
  ])
  await host.close(s.session_id)
})

test('after an idle spell the session forks its next cell process anew, with the state intact', async () => {
  const idle = new SessionHost({
    runnerId: 'runner-idle',
    command: (dir) => ({
      ...unsandboxedSessionHost(dir),
      env: { ...process.env, SANDFLEET_SESSION_SPARE_IDLE_S: '0.2' }
    })
  })
  try {
    const s = await idle.create()
    await idle.execute(s.session_id, { code: 'x = 1' })
    await sleep(600)
    for (let i = 0; i < 3; i++) {
      assert.equal((await idle.execute(s.session_id, { code: 'x += 1' })).status, 'ok')
      await sleep(300)
    }
    const slow = await idle.execute(s.session_id, { code: 'x = -1\nwhile True: pass', timeout_ms: 200 })
    assert.equal(slow.status, 'timeout')
    await sleep(400)
    assert.deepEqual((await idle.execute(s.session_id, { code: 'x' })).display, [{ 'text/plain': '4' }])
  } finally {
    await idle.shutdown()
  }
})

test("all of a cell's output comes back: large prints, stderr, and a subprocess's output", async () => {
  const s = await host.create()
  const r = await host.execute(s.session_id, {
    code: 'import subprocess, sys\nprint("a" * 300000)\nsys.stderr.write("b" * 70000)\nsys.stdout.flush()\nsubprocess.run(["echo", "from child"])\nprint("end")'
  })
  assert.equal(r.status, 'ok')
  assert.equal(r.stdout, 'a'.repeat(300000) + '\nfrom child\nend\n')
  assert.equal(r.stderr, 'b'.repeat(70000))
  assert.deepEqual(r.truncated, { stdout: false, stderr: false })
  await host.close(s.session_id)
})

test('closing a session without namespaces also ends what its cells left running', async () => {
  const s = await host.create()
  assert.equal(host.isolatedOf(s.session_id), false, 'the unsandboxed host makes no namespaces unless asked')
  const r = await host.execute(s.session_id, {
    code: 'import subprocess\np = subprocess.Popen(["sleep", "30"], stdout=subprocess.DEVNULL)\nprint(p.pid)'
  })
  const pid = Number(r.stdout.trim())
  process.kill(pid, 0) // running
  await host.close(s.session_id)
  let alive = true
  for (let i = 0; i < 50 && alive; i++) {
    await sleep(50)
    try {
      process.kill(pid, 0)
    } catch {
      alive = false
    }
  }
  assert.equal(alive, false, 'the background process died with its session')
})

test("a cell's value gives its rich forms (text/html, text/latex, …) beside text/plain, as a Jupyter kernel does", async () => {
  const s = await host.create()
  const code =
    'class Table:\n    def __repr__(self): return "Table()"\n    def _repr_html_(self): return "<table><tr><td>1</td></tr></table>"\n    def _repr_latex_(self): return None\n    def _repr_png_(self): raise ValueError("no png")\nTable()'
  const r = await host.execute(s.session_id, { code })
  assert.deepEqual(
    [r.status, r.display],
    ['ok', [{ 'text/plain': 'Table()', 'text/html': '<table><tr><td>1</td></tr></table>' }]],
    r.stderr
  )
  assert.deepEqual((await host.execute(s.session_id, { code: 'Table' })).display, [
    { 'text/plain': "<class '__main__.Table'>" }
  ])
  await host.close(s.session_id)
})

test("fetch_files follows the executor's rules: a link out of the work dir, a FIFO and a file over 16 MiB are left out", async () => {
  const outside = join(mkdtempSync(join(tmpdir(), 'sf-outside-')), 'secret.txt')
  writeFileSync(outside, "not the session's")
  const s = await host.create()
  const code = [
    'import os',
    `os.symlink(${JSON.stringify(outside)}, "out")`,
    'os.symlink("/proc/self", "me")',
    'os.mkfifo("fifo")',
    'open("big", "wb").write(b"x" * ((16 << 20) + 1))',
    'open("real.txt", "w").write("mine")',
    'os.chdir("/")' // the paths are the work dir's, whatever the cell made the current directory
  ].join('\n')
  const r = await host.execute(s.session_id, {
    code,
    fetch_files: ['out', 'me/environ', 'fifo', 'big', '../secret.txt', 'real.txt', 'missing'],
    timeout_ms: 5000
  })
  assert.equal(r.status, 'ok', JSON.stringify(r.error))
  assert.deepEqual(Object.keys(r.files ?? {}), ['real.txt'])
  assert.equal(Buffer.from(r.files?.['real.txt'] ?? '', 'base64').toString(), 'mine')
  const why = r.fetch_errors ?? {}
  assert.deepEqual(
    Object.keys(why).sort(),
    ['../secret.txt', 'big', 'fifo', 'me/environ', 'missing', 'out'],
    JSON.stringify(why)
  )
  assert.deepEqual(
    [why.fifo, why.missing, why.big],
    ['not a regular file', 'no such file', `larger than ${16 << 20} bytes: not returned`]
  )
  assert.match(why.out, /a link leads out/)
  await host.close(s.session_id)
})

test("a cell's files that leave the work dir are refused before it runs (the caller's 400), its session keeps its state", async () => {
  const s = await host.create()
  await host.execute(s.session_id, { code: 'x = 7' })
  await assert.rejects(
    host.execute(s.session_id, { code: 'x = 0', files: { '../escape.txt': Buffer.from('x').toString('base64') } }),
    { code: 'SF_ERR_RUNNER_INVALID_REQUEST', statusCode: 400, field: 'files/../escape.txt' }
  )
  assert.deepEqual((await host.execute(s.session_id, { code: 'x' })).display, [{ 'text/plain': '7' }])
  await host.close(s.session_id)
})

test("a cell over the runner's limits is refused with the runner's 400 error naming the field, as a call is; without timeout_ms it gets the default within the limit", async () => {
  const limited = new SessionHost({ runnerId: 'runner-limits', config: runnerConfig({ maxTimeoutMs: 2000 }) })
  try {
    const s = await limited.create()
    await assert.rejects(limited.execute(s.session_id, { code: 'print(1)', timeout_ms: 5000 }), {
      code: 'SF_ERR_RUNNER_LIMIT',
      statusCode: 400,
      field: 'timeout_ms'
    })
    const slow = await limited.execute(s.session_id, {
      code: 'import time\nprint("started", flush=True)\ntime.sleep(30)'
    })
    assert.deepEqual([slow.status, slow.stdout], ['timeout', 'started\n'])
    assert.ok(
      slow.duration_ms < 30_000,
      `ran ${slow.duration_ms} ms: the limit, not the contract's 10 s default nor the sleep`
    )
  } finally {
    await limited.shutdown()
  }
})

test("a session that does not answer by its cell's hard deadline is cut off, and answers lost from then on", async () => {
  const quick = new SessionHost({ runnerId: 'runner-hung', config: runnerConfig({ graceMs: 100 }) })
  let pid = 0
  try {
    const s = await quick.create()
    const first = await quick.execute(s.session_id, { code: 'x = 1' })
    pid = Number(first.sandbox?.replace('session-', ''))
    assert.ok(pid > 0, String(first.sandbox))
    // Stopped once it holds the session and has forked the process that takes the next cell (a
    // stop in the middle of the hand-over can end the session at once instead).
    const children = (): string => {
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
      } catch {
        return ''
      }
    }
    for (let waited = 0; children() === '' && waited < 30_000; waited += 10) await sleep(10)
    process.kill(pid, 'SIGSTOP')
    await assert.rejects(quick.execute(s.session_id, { code: 'print(x)', timeout_ms: 200 }), {
      code: 'SF_ERR_SESSION_LOST',
      statusCode: 410
    })
    await assert.rejects(quick.execute(s.session_id, { code: 'print(x)' }), {
      code: 'SF_ERR_SESSION_LOST',
      statusCode: 410
    })
  } finally {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
    await quick.shutdown()
  }
})
