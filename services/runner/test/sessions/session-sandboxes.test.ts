import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { SandboxEvent, SandboxInfo, SandboxRunEvent } from '@sandfleet/protocol'
import { Runner } from '../../src/runner/runner.ts'
import { runnerConfig } from '../../src/config.ts'
import type { SessionSandboxes } from '../../src/sessions/session-sandboxes.ts'

let runner: Runner
let sandboxes: SessionSandboxes
before(async () => {
  runner = new Runner(
    runnerConfig({ backend: 'process', poolSize: 1, id: 'sandboxes-t', maxSessionsPerKey: 4, maxTimeoutMs: 20_000 })
  )
  await runner.start()
  const s = runner.sandboxes
  assert.ok(s !== undefined, 'the runner holds sandboxes')
  sandboxes = s
})
after(async () => {
  await runner.close()
})

const b64 = (text: string): string => Buffer.from(text).toString('base64')

async function make(key = 'k1', timeout_s = 60): Promise<SandboxInfo> {
  return await sandboxes.create({ template: 'base', timeout_s, env: { GREETING: 'hi' }, labels: { run: 'r1' } }, key)
}

/** A process's events until its end. */
async function started(id: string, token: string, cmd: string, stdin = false): Promise<SandboxEvent[]> {
  const events: SandboxEvent[] = []
  await sandboxes.stream(id, { token }, { op: 'start', cmd: '/bin/bash', args: ['-l', '-c', cmd], stdin }, (e) =>
    events.push(e)
  )
  return events
}

const text = (events: SandboxEvent[], stream: 'stdout' | 'stderr'): string =>
  events.map((e) => (e.event === stream ? Buffer.from(e.data, 'base64').toString() : '')).join('')

test('a sandbox runs code in its contexts, its home is /home/user, its env is set, and its token opens it', async () => {
  const box = await make()
  const token = box.token ?? ''
  assert.match(token, /^[0-9a-f]{48}$/)
  const run = async (code: string, extra: object = {}) =>
    await sandboxes.call(box.sandbox_id, { token }, { op: 'run', code, ...extra })
  await run('x = 41')
  const answer = await run('import os\nx + 1, os.getcwd(), os.environ["GREETING"], os.environ["HOME"]')
  assert.equal(answer.results[0]?.data['text/plain'], "(42, '/home/user', 'hi', '/home/user')")
  assert.equal(answer.results[0]?.main, true)
  assert.equal(answer.execution_count, 2)
  const ctx = await sandboxes.call(box.sandbox_id, { token: undefined }, { op: 'context_create', language: 'python' })
  assert.equal((await run('x = 5\nx', { context: ctx.id })).results[0]?.data['text/plain'], '5')
  assert.equal((await run('x')).results[0]?.data['text/plain'], '41', 'each context its own globals')
  await sandboxes.call(box.sandbox_id, { token: undefined }, { op: 'context_restart', context: ctx.id })
  const gone = await run('x', { context: ctx.id })
  assert.equal(gone.result.error?.type, 'NameError', 'a restarted context starts empty')
  const listed = await sandboxes.call(box.sandbox_id, { token: undefined }, { op: 'context_list' })
  assert.equal(listed.contexts.length, 2)
  const env = await run('import os\nos.environ.get("ONLY_ONCE")', { env: { ONLY_ONCE: '1' } })
  assert.equal(env.results[0]?.data['text/plain'], "'1'")
  assert.equal((await run('os.environ.get("ONLY_ONCE")')).results.length, 0, 'a run env is for that run only')
  await assert.rejects(
    sandboxes.call(box.sandbox_id, { token: 'nope' }, { op: 'run', code: '1' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_TOKEN'
  )
  await assert.rejects(
    sandboxes.call(box.sandbox_id, { token: undefined }, { op: 'run', code: '1' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_TOKEN'
  )
  await sandboxes.call(box.sandbox_id, { key: 'k1' }, { op: 'kill' })
})

test("a streamed run's output comes as the code prints it, before the run ends; its traceback is its error's alone", async () => {
  const box = await make()
  const token = box.token ?? ''
  // the cell prints, then waits for a go (a file of its sandbox) that this test writes only once it saw what the cell
  // printed first
  const go = '/home/user/go'
  const events: SandboxRunEvent[] = []
  let sawFirst: () => void = () => {}
  const first = new Promise<void>((resolve) => (sawFirst = resolve))
  const cell = [
    'import os, time',
    'print("a", flush=True)',
    'deadline = time.monotonic() + 15',
    `while not os.path.exists(${JSON.stringify(go)}) and time.monotonic() < deadline:`,
    '    time.sleep(0.01)',
    `print("b" if os.path.exists(${JSON.stringify(go)}) else "no go")`,
    '{}["missing"]'
  ].join('\n')
  const ran = sandboxes.stream(box.sandbox_id, { token }, { op: 'run', code: cell }, (e) => {
    events.push(e)
    if (e.event === 'output') sawFirst()
  })
  await first
  await sandboxes.call(box.sandbox_id, { token }, { op: 'write', path: go, data: '' })
  await ran
  const kinds = events.map((e) => e.event)
  assert.equal(kinds[0], 'running')
  assert.equal(kinds.at(-1), 'ran', 'the run comes last')
  const out = events.map((e) => (e.event === 'output' && e.stream === 'stdout' ? e.text : '')).join('')
  assert.equal(out, 'a\nb\n', 'the cell waited for the go: its first line came while it ran')
  const last = events.at(-1)
  assert.ok(last?.event === 'ran')
  assert.equal(last.run.result.stdout, out, "the run's result keeps what was streamed")
  assert.equal(last.run.result.error?.type, 'KeyError')
  assert.match(last.run.result.error?.traceback ?? '', /KeyError/)
  assert.doesNotMatch(last.run.result.stderr, /Traceback/, 'a streamed traceback is not also stderr')
  const running = events[0]
  assert.ok(running?.event === 'running')
  assert.equal(running.execution_count, last.run.execution_count)

  // a JavaScript context's output comes as events too (when its run ends), its thrown stack its error alone
  const js: SandboxRunEvent[] = []
  await sandboxes.stream(
    box.sandbox_id,
    { token },
    { op: 'run', language: 'javascript', code: 'console.log("x"); console.error("y"); throw new Error("z")' },
    (e) => js.push(e)
  )
  const texts = js.flatMap((e) => (e.event === 'output' ? [`${e.stream}:${e.text}`] : []))
  assert.deepEqual(texts, ['stdout:x\n', 'stderr:y\n'])
  const jsRan = js.at(-1)
  assert.ok(jsRan?.event === 'ran')
  assert.equal(jsRan.run.result.error?.message, 'z')
  assert.equal(jsRan.run.result.stderr, 'y\n')

  // a context that is not there is refused before any event
  const none: SandboxRunEvent[] = []
  await assert.rejects(
    sandboxes.stream(box.sandbox_id, { token }, { op: 'run', code: '1', context: 'nope' }, (e) => none.push(e)),
    (err: Error & { code?: string }) => err.code === 'SF_ERR_SANDBOX_CONTEXT_NOT_FOUND'
  )
  assert.deepEqual(none, [])
})

test('files round trip inside the sandbox: text, 1 MiB binary, list, stat, mkdir, move, remove; only its own places are writable', async () => {
  const box = await make()
  const auth = { token: box.token ?? '' }
  const id = box.sandbox_id
  const blob = Buffer.alloc(1 << 20)
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 131 + 7) % 256
  await sandboxes.call(id, auth, { op: 'write', path: '/home/user/a.txt', data: b64('hello') })
  await sandboxes.call(id, auth, { op: 'write', path: 'bin/blob', data: blob.toString('base64') })
  assert.equal(
    Buffer.from((await sandboxes.call(id, auth, { op: 'read', path: 'a.txt' })).data, 'base64').toString(),
    'hello'
  )
  assert.ok(
    Buffer.from((await sandboxes.call(id, auth, { op: 'read', path: '/home/user/bin/blob' })).data, 'base64').equals(
      blob
    )
  )
  const names = (await sandboxes.call(id, auth, { op: 'list', path: '/home/user', depth: 1 })).entries.map(
    (e) => e.name
  )
  assert.deepEqual(names, ['a.txt', 'bin'])
  assert.equal((await sandboxes.call(id, auth, { op: 'stat', path: 'bin/blob' })).entry.size, 1 << 20)
  assert.equal((await sandboxes.call(id, auth, { op: 'mkdir', path: 'd/e' })).entry.type, 'dir')
  await assert.rejects(
    sandboxes.call(id, auth, { op: 'mkdir', path: 'd/e' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_PATH_EXISTS'
  )
  await sandboxes.call(id, auth, { op: 'move', source: 'a.txt', destination: 'd/b.txt' })
  await assert.rejects(
    sandboxes.call(id, auth, { op: 'stat', path: 'a.txt' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_PATH_NOT_FOUND'
  )
  await sandboxes.call(id, auth, { op: 'remove', path: 'd' })
  await assert.rejects(
    sandboxes.call(id, auth, { op: 'write', path: '/usr/x', data: '' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_PATH_DENIED'
  )
  // the cells see the same files
  await sandboxes.call(id, auth, { op: 'write', path: 'from-agent.txt', data: b64('seen') })
  const seen = await sandboxes.call(id, auth, { op: 'run', code: 'open("from-agent.txt").read()' })
  assert.equal(seen.results[0]?.data['text/plain'], "'seen'")
  // another sandbox does not
  const other = await make()
  await assert.rejects(
    sandboxes.call(other.sandbox_id, { token: other.token ?? '' }, { op: 'read', path: 'from-agent.txt' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_PATH_NOT_FOUND'
  )
  await sandboxes.call(id, { key: 'k1' }, { op: 'kill' })
  await sandboxes.call(other.sandbox_id, { key: 'k1' }, { op: 'kill' })
})

test('processes: bash -l -c with exit code and stderr, background killed by signal, stdin, no network', async () => {
  const box = await make()
  const token = box.token ?? ''
  const id = box.sandbox_id
  const failed = await started(id, token, 'echo out; echo err >&2; echo $GREETING; exit 3')
  assert.deepEqual(failed[0], { event: 'start', pid: (failed[0] as { pid: number }).pid })
  assert.equal(text(failed, 'stdout'), 'out\nhi\n')
  assert.equal(text(failed, 'stderr'), 'err\n')
  assert.deepEqual(failed.at(-1), { event: 'end', exit_code: 3, exited: true, status: 'exit status 3' })
  // a background process: the stream is left, the process runs on, ps lists it, a signal ends it
  const controller = new AbortController()
  let pid = 0
  const detached = sandboxes.stream(
    id,
    { token },
    { op: 'start', cmd: '/bin/bash', args: ['-l', '-c', 'sleep 30'] },
    (e) => {
      if (e.event === 'start') {
        pid = e.pid
        controller.abort()
      }
    },
    controller.signal
  )
  await detached
  const ps = await sandboxes.call(id, { token }, { op: 'ps' })
  assert.deepEqual(
    ps.processes.map((p) => p.pid),
    [pid]
  )
  const ended: SandboxEvent[] = []
  const watch = sandboxes.stream(id, { token }, { op: 'connect', pid }, (e) => ended.push(e))
  await sandboxes.call(id, { token }, { op: 'signal', pid, signal: 9 })
  await watch
  assert.deepEqual(ended.at(-1), { event: 'end', exit_code: -1, exited: false, status: 'signal: killed' })
  assert.deepEqual((await sandboxes.call(id, { token }, { op: 'ps' })).processes, [])
  await assert.rejects(
    sandboxes.call(id, { token }, { op: 'signal', pid, signal: 9 }),
    (e: { code?: string }) => e.code === 'SF_ERR_SANDBOX_PROCESS_NOT_FOUND'
  )
  // stdin
  const cat: SandboxEvent[] = []
  const catDone = sandboxes.stream(id, { token }, { op: 'start', cmd: '/bin/cat', args: [], stdin: true }, (e) => {
    cat.push(e)
    if (e.event === 'start')
      void sandboxes
        .call(id, { token }, { op: 'stdin', pid: e.pid, data: b64('typed') })
        .then(async () => await sandboxes.call(id, { token }, { op: 'close_stdin', pid: e.pid }))
  })
  await catDone
  assert.equal(text(cat, 'stdout'), 'typed')
  // its own namespaces: no network, its own processes only
  const net = await started(
    id,
    token,
    'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; ls /proc | grep -c "^[0-9]"'
  )
  assert.equal(text(net, 'stdout').split('\n')[0], 'lo', 'only the loopback interface')
  await sandboxes.call(id, { key: 'k1' }, { op: 'kill' })
})

test("a sandbox's processes have its limits: memory (address space), at most 512 processes", async () => {
  const box = await make()
  const token = box.token ?? ''
  const big = await started(box.sandbox_id, token, 'python3 -c "b = bytearray(1536 << 20)"')
  assert.deepEqual(big.at(-1), { event: 'end', exit_code: 1, exited: true, status: 'exit status 1' })
  assert.match(text(big, 'stderr'), /MemoryError/)
  const limits = await started(box.sandbox_id, token, 'grep -E "Max (processes|address space)" /proc/self/limits')
  assert.match(text(limits, 'stdout'), /Max processes\s+512\s+512/)
  assert.match(text(limits, 'stdout'), /Max address space\s+805306368\s+805306368/, '512 MiB and 256 for the program')
  await sandboxes.call(box.sandbox_id, { key: 'k1' }, { op: 'kill' })
})

test("a sandbox is another key's not found, listed for its own key, and gone after its end", async () => {
  const box = await make('k2', 2)
  await assert.rejects(
    sandboxes.call(box.sandbox_id, { key: 'k3' }, { op: 'info' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SESSION_NOT_FOUND'
  )
  assert.deepEqual(sandboxes.list('k3'), [])
  const [listed] = sandboxes.list('k2')
  assert.equal(listed?.sandbox_id, box.sandbox_id)
  assert.deepEqual(listed?.labels, { run: 'r1' })
  assert.equal(listed?.token, undefined, 'a list shows no token')
  const info = await sandboxes.call(box.sandbox_id, { key: 'k2' }, { op: 'set_timeout', timeout_s: 1 })
  assert.ok(Date.parse(info.end_at) <= Date.now() + 1000)
  const deadline = Date.now() + 15_000
  while (sandboxes.list('k2').length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  assert.deepEqual(sandboxes.list('k2'), [], 'killed at its end')
  await assert.rejects(
    sandboxes.call(box.sandbox_id, { key: 'k2' }, { op: 'info' }),
    (e: { code?: string }) => e.code === 'SF_ERR_SESSION_NOT_FOUND'
  )
})
