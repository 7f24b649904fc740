/**
 * Sessions through a real gateway and two real runners (process backend): the session host
 * runs under bubblewrap like every other sandbox; the session id names its runner, so calls go
 * to the runner holding it; a dead session or runner is 410, an unknown id 404.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { decodeSessionId } from '@sandfleet/protocol'
import { SYSCALL_TABLES } from '../services/runner/src/kits/linux/seccomp.ts'
import { call, post, startFleet, type TestFleet } from './helpers/fleet.ts'

let fleet: TestFleet
before(async () => {
  fleet = await startFleet(['sess-a', 'sess-b'])
})
after(async () => {
  await fleet?.close()
})

const open = async (body: object = {}): Promise<string> => {
  const res = await post(`${fleet.url}/v1/sessions`, body)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  return res.body.session_id as string
}
const cell = async (id: string, code: string, extra: object = {}): Promise<{ status: number; body: any }> =>
  await post(`${fleet.url}/v1/sessions/${encodeURIComponent(id)}/execute`, { code, ...extra })

test('state persists across 3 calls: variables, imports, functions, files; a last expression is displayed', async () => {
  const id = await open({ ttl_s: 60 })
  assert.ok(['sess-a', 'sess-b'].includes(decodeSessionId(id)?.runner ?? ''), 'the id names a runner of the fleet')
  assert.equal(
    (await cell(id, 'import math\nx = 40\ndef f(v): return v + 2\nopen("note.txt", "w").write("kept")')).body.status,
    'ok'
  )
  const second = await cell(id, 'x = f(x)\nprint(math.floor(x))')
  assert.deepEqual(
    [second.body.status, second.body.stdout, second.body.runner],
    ['ok', '42\n', decodeSessionId(id)?.runner]
  )
  const third = await cell(id, 'open("note.txt").read()')
  assert.deepEqual(third.body.display, [{ 'text/plain': "'kept'" }])
  const info = await call('GET', `${fleet.url}/v1/sessions/${id}`)
  assert.deepEqual([info.status, info.body.cells, info.body.session_id], [200, 3, id])
  assert.equal((await call('DELETE', `${fleet.url}/v1/sessions/${id}`)).status, 204)
  const gone = await cell(id, 'x')
  assert.deepEqual([gone.status, gone.body.error.code], [404, 'SF_ERR_SESSION_NOT_FOUND'])
})

test('a cell past its timeout is killed and the session keeps the state from before it', async () => {
  const id = await open()
  await cell(id, 'n = 7')
  const slow = await cell(id, 'n = 8\nwhile True: pass', { timeout_ms: 300 })
  assert.equal(slow.body.status, 'timeout')
  assert.deepEqual((await cell(id, 'n')).body.display, [{ 'text/plain': '7' }])
})

test('a session runs sandboxed: uid 65534, no network even to a listener on 127.0.0.1', async () => {
  const listener = createServer((s) => s.end('hello')).listen(0, '127.0.0.1')
  await new Promise((resolve) => listener.once('listening', resolve))
  const port = (listener.address() as { port: number }).port
  try {
    const id = await open()
    const res = await cell(
      id,
      [
        'import os, socket',
        'print(os.getuid())',
        's = socket.socket()',
        's.settimeout(1)',
        'try:',
        `    s.connect(("127.0.0.1", ${port})); print("reached")`,
        'except OSError as e:',
        '    print("blocked")'
      ].join('\n')
    )
    assert.deepEqual([res.body.status, res.body.stdout], ['ok', '65534\nblocked\n'])
  } finally {
    listener.close()
  }
})

test('a session runs under the seccomp filter, less the calls that make its namespaces', async () => {
  const table = SYSCALL_TABLES[process.arch]
  assert.ok(table !== undefined, `no system call table for ${process.arch}`)
  const id = await open()
  const res = await cell(
    id,
    [
      'import ctypes',
      'libc = ctypes.CDLL(None, use_errno=True)',
      `for nr in (${String(table.numbers.bpf)}, ${String(table.numbers.keyctl)}, ${String(table.numbers.io_uring_setup)}, ${String(table.numbers.userfaultfd)}):`,
      '    ctypes.set_errno(0)',
      '    print(libc.syscall(nr, 0, 0, 0, 0, 0), ctypes.get_errno())'
    ].join('\n')
  )
  assert.deepEqual([res.body.status, res.body.stdout], ['ok', '-1 1\n'.repeat(4)], JSON.stringify(res.body))
})

test('an idle session expires after its TTL: 404', async () => {
  const id = await open({ ttl_s: 1 })
  await sleep(2300)
  const res = await cell(id, '1')
  assert.deepEqual([res.status, res.body.error.code], [404, 'SF_ERR_SESSION_NOT_FOUND'])
})

test("a session whose process died answers 410 session lost, the fleet's fault (infra_error), never a fresh state", async () => {
  const id = await open()
  await cell(id, 'x = 1')
  const holder = fleet.runners.find((r) => r.runner.id === decodeSessionId(id)?.runner)
  assert.ok(holder?.runner.sessions !== undefined)
  await holder.runner.sessions.crash(id)
  const res = await cell(id, 'x')
  assert.deepEqual([res.status, res.body.status, res.body.error.code], [410, 'infra_error', 'SF_ERR_SESSION_LOST'])
})

test('ids sandfleet did not make are 404; bad bodies are 400 naming the field', async () => {
  const res = await cell('not-a-session', '1')
  assert.deepEqual([res.status, res.body.error.code], [404, 'SF_ERR_SESSION_NOT_FOUND'])
  const bad = await post(`${fleet.url}/v1/sessions`, { ttl_s: 'long' })
  assert.deepEqual([bad.status, bad.body.error.field], [400, 'ttl_s'])
  const id = await open()
  const noCode = await post(`${fleet.url}/v1/sessions/${id}/execute`, {})
  assert.deepEqual([noCode.status, noCode.body.error.field], [400, 'code'])
})

test('a session on a runner that left the fleet answers 410', async () => {
  // its own fleet, so the shared one keeps both runners
  const small = await startFleet(['sess-gone'])
  try {
    const created = await post(`${small.url}/v1/sessions`, {})
    const id = created.body.session_id as string
    await small.runners[0].close()
    const res = await post(`${small.url}/v1/sessions/${id}/execute`, { code: '1' })
    assert.deepEqual([res.status, res.body.status, res.body.error.code], [410, 'infra_error', 'SF_ERR_SESSION_LOST'])
  } finally {
    await small.close()
  }
})

test('the TypeScript client opens a session, keeps state across cells and closes it', async () => {
  const { SandfleetClient } = await import('@sandfleet/client')
  const client = new SandfleetClient({ url: fleet.url, batchWindowMs: 0 })
  try {
    const session = await client.createSession({ ttl_s: 60 })
    await session.execute({ code: 'total = 0' })
    for (let i = 1; i <= 3; i++) await session.execute({ code: `total += ${i}` })
    const r = await session.execute({ code: 'print(total)' })
    assert.deepEqual([r.status, r.stdout], ['ok', '6\n'])
    await session.close()
    assert.equal(session.state, 'closed')
  } finally {
    await client.close()
  }
})

test("sessions of one runner cannot see or signal each other's processes, nor read each other's files or sockets", async () => {
  const a = await open()
  const runner = decodeSessionId(a)?.runner
  let b = await open()
  const others: string[] = []
  while (decodeSessionId(b)?.runner !== runner) {
    others.push(b)
    b = await open()
  } // two sessions on one runner
  const holder = fleet.runners.find((r) => r.runner.id === runner)
  assert.equal(holder?.runner.sessions?.isolatedOf(a), true, 'the session has namespaces of its own')
  const mine = await cell(
    a,
    [
      'import os, subprocess',
      'open("secret.txt", "w").write("a-only")',
      'child = subprocess.Popen(["sleep", "60"], stdout=subprocess.DEVNULL)',
      'print(os.getcwd(), child.pid, os.getuid())'
    ].join('\n')
  )
  assert.equal(mine.body.status, 'ok', JSON.stringify(mine.body))
  const [cwd] = mine.body.stdout.trim().split(' ')
  const probe = await cell(
    b,
    [
      'import os, signal',
      'seen = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())',
      'hit = []',
      'for pid in range(2, 32768):',
      '    if pid in seen: continue',
      '    try:',
      '        os.kill(pid, signal.SIGKILL); hit.append(pid)',
      '    except ProcessLookupError: pass',
      '    except PermissionError: hit.append(pid)',
      'try:',
      `    open(${JSON.stringify(cwd + '/secret.txt')}).read(); print("read")`,
      'except OSError: print("unreadable")',
      'print(hit, os.listdir("/tmp") == [os.path.basename(os.getcwd())], os.listdir("/run/sandfleet-sessions"), len(seen) < 5)'
    ].join('\n'),
    { timeout_ms: 10_000 }
  )
  assert.equal(probe.body.status, 'ok', JSON.stringify(probe.body))
  assert.equal(probe.body.stdout, 'unreadable\n[] True [] True\n')
  // a's sleeping child was not killed, and a still has its state
  const after = await cell(a, 'os.kill(child.pid, 0)\nprint(open("secret.txt").read())')
  assert.deepEqual([after.body.status, after.body.stdout], ['ok', 'a-only\n'])
  for (const id of [a, b, ...others]) await call('DELETE', `${fleet.url}/v1/sessions/${id}`)
})

test('a sandboxed session writes and fetches files by absolute path in its own /mnt, /dev/shm and /tmp; another session sees none of them', async () => {
  const a = await open()
  const b = await open()
  const files = { '/mnt/in.txt': Buffer.from('given').toString('base64') }
  const wrote = await cell(
    a,
    'open("/dev/shm/s.txt", "w").write(open("/mnt/in.txt").read() + "!")\nopen("/tmp/t.txt", "w").write("t")',
    { files, fetch_files: ['/dev/shm/s.txt', '/tmp/t.txt', '/etc/passwd'] }
  )
  assert.equal(wrote.body.status, 'ok', JSON.stringify(wrote.body))
  assert.deepEqual(
    Object.fromEntries(
      Object.entries(wrote.body.files).map(([k, v]) => [k, Buffer.from(v as string, 'base64').toString()])
    ),
    { '/dev/shm/s.txt': 'given!', '/tmp/t.txt': 't' }
  )
  assert.match(wrote.body.fetch_errors['/etc/passwd'], /outside the sandbox's writable places/)
  const other = await cell(
    b,
    'import os\nprint(os.listdir("/mnt"), os.listdir("/dev/shm"), os.path.exists("/tmp/t.txt"))'
  )
  assert.deepEqual([other.body.status, other.body.stdout], ['ok', '[] [] False\n'], JSON.stringify(other.body))
  for (const id of [a, b]) await call('DELETE', `${fleet.url}/v1/sessions/${id}`)
})

test("a session's files hold at most its memory: past it the write fails, the session and its state go on", async () => {
  const id = await open({ memory_mb: 64 })
  assert.equal((await cell(id, 'kept = 5')).body.status, 'ok')
  for (const dir of ['/tmp', '/mnt', '/dev/shm']) {
    const code = `chunk = b"x" * (1 << 20)\ntry:\n    with open("${dir}/fill", "wb") as f:\n        for _ in range(96): f.write(chunk)\nexcept OSError as e:\n    print("refused", e.errno)\nimport os\nos.remove("${dir}/fill")`
    const filled = await cell(id, code)
    assert.deepEqual(
      [filled.body.status, filled.body.stdout],
      ['ok', 'refused 28\n'],
      `${dir}: ${JSON.stringify(filled.body)}`
    )
  }
  assert.deepEqual((await cell(id, 'kept')).body.display, [{ 'text/plain': '5' }])
  await call('DELETE', `${fleet.url}/v1/sessions/${id}`)
})

test('closing a session ends every process it started, a background one included', async () => {
  const { readdirSync, readFileSync } = await import('node:fs')
  const sleepers = (): number =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8') === 'sleep\u00007319\u0000'
        } catch {
          return false
        }
      }).length
  const id = await open()
  const started = await cell(
    id,
    'import subprocess\nsubprocess.Popen(["sleep", "7319"], stdout=subprocess.DEVNULL)\n"started"'
  )
  assert.deepEqual(started.body.display, [{ 'text/plain': "'started'" }])
  assert.equal(sleepers(), 1)
  assert.equal((await call('DELETE', `${fleet.url}/v1/sessions/${id}`)).status, 204)
  for (let i = 0; i < 50 && sleepers() > 0; i++) await sleep(100)
  assert.equal(sleepers(), 0, 'the background process died with its session')
})

test('a session answers only the API key that opened it: to another key it does not exist', async () => {
  const keyed = await startFleet(['sess-keys'], {}, { apiKeys: ['key-one-123', 'key-two-456'] })
  try {
    const one = { authorization: 'Bearer key-one-123' }
    const two = { 'x-api-key': 'key-two-456' }
    const created = await post(`${keyed.url}/v1/sessions`, {}, one)
    assert.equal(created.status, 201)
    const id = created.body.session_id as string
    assert.equal((await post(`${keyed.url}/v1/sessions/${id}/execute`, { code: 'secret = 42' }, one)).body.status, 'ok')
    const stolen = await post(`${keyed.url}/v1/sessions/${id}/execute`, { code: 'secret' }, two)
    assert.deepEqual([stolen.status, stolen.body.error.code], [404, 'SF_ERR_SESSION_NOT_FOUND'])
    const info = await fetch(`${keyed.url}/v1/sessions/${id}`, { headers: two })
    assert.equal(info.status, 404)
    const closing = await fetch(`${keyed.url}/v1/sessions/${id}`, { method: 'DELETE', headers: two })
    assert.equal(closing.status, 404, 'another key cannot close it either')
    assert.deepEqual((await post(`${keyed.url}/v1/sessions/${id}/execute`, { code: 'secret' }, one)).body.display, [
      { 'text/plain': '42' }
    ])
  } finally {
    await keyed.close()
  }
})
