/**
 * E2B's official SDK (`@e2b/code-interpreter`, pinned) against `sandfleet serve`, set up as the README says: the
 * two environment variables (E2B_API_URL, E2B_SANDBOX_URL) and an API key of the gateway's. On the process backend
 * and on the docker backend (whose sessions, and so sandboxes, run under bubblewrap beside its containers), the
 * whole life of a sandbox; two keys that cannot see each other's sandboxes; a sandbox past its timeout gone; a full
 * runner answered as E2B answers a full account; a sandbox whose runner died answered as gone.
 */
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { Sandbox } from '@e2b/code-interpreter'
import { startServe, type Served } from './helpers/serve.ts'
import { startFleet } from './helpers/fleet.ts'

const KEY = 'e2b-key-one-0001'
const OTHER = 'e2b-key-two-0002'

/** The SDK pointed at `url` the way the README says. */
function useFleet(url: string): void {
  process.env.E2B_API_URL = url
  process.env.E2B_SANDBOX_URL = url
  process.env.E2B_API_KEY = KEY
}

/** Waits for `check` to hold, a generous while. */
async function eventually(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${ms} ms`)
    await sleep(200)
  }
}

/**
 * A cell's output reaches `onStdout` and `onStderr` while the cell runs: it prints, then waits for a file that this
 * test writes only once `onStdout` had the first line (were the output held to the run's end, the cell would give up
 * waiting and print "no go"), then prints again and raises. The order of what happened is asserted, never how long
 * it took.
 */
async function streamedRun(sbx: Sandbox): Promise<void> {
  const go = '/home/user/go-streamed'
  const seen: string[] = []
  let wrote: Promise<unknown> = Promise.resolve()
  const cell = [
    'import os, sys, time',
    'print("a", flush=True)',
    'deadline = time.monotonic() + 30',
    `while not os.path.exists(${JSON.stringify(go)}) and time.monotonic() < deadline:`,
    '    time.sleep(0.01)',
    'sys.stderr.write("to stderr\\n")',
    `print("b" if os.path.exists(${JSON.stringify(go)}) else "no go")`,
    'raise ValueError("at the end")'
  ].join('\n')
  const execution = await sbx.runCode(cell, {
    onStdout: (out) => {
      seen.push(`stdout ${out.line}`)
      if (out.line === 'a\n') wrote = sbx.files.write(go, '')
    },
    onStderr: (out) => void seen.push(`stderr ${out.line}`),
    onError: (error) => void seen.push(`error ${error.name}`)
  })
  seen.push('resolved')
  await wrote
  // stdout and stderr are two pipes: each keeps its order, not their order between them
  assert.equal(seen[0], 'stdout a\n', 'the first line came before the cell went on')
  assert.deepEqual(
    seen.filter((e) => e.startsWith('stdout')),
    ['stdout a\n', 'stdout b\n']
  )
  assert.deepEqual(seen.slice(-2), ['error ValueError', 'resolved'])
  assert.ok(seen.includes('stderr to stderr\n'), seen.join(', '))
  assert.deepEqual(execution.logs.stdout, ['a\n', 'b\n'])
  assert.deepEqual(execution.logs.stderr, ['to stderr\n'], 'the traceback is the error alone')
  assert.equal(execution.error?.name, 'ValueError')
  assert.match(execution.error?.traceback ?? '', /at the end/)
}

/** A sandbox's whole life through the SDK: every call the issue lists, in order. */
async function wholeLife(): Promise<void> {
  const sbx = await Sandbox.create({ timeoutMs: 120_000, metadata: { suite: 'sdk' }, envs: { GREETING: 'hello' } })
  try {
    // code, with state across calls
    assert.equal((await sbx.runCode('x = 20')).error, undefined)
    const second = await sbx.runCode('x = x + 1\nprint("x is", x)\nx * 2')
    assert.equal(second.text, '42')
    assert.deepEqual(second.logs.stdout, ['x is 21\n'])
    assert.equal((await sbx.runCode('import os\nos.environ["GREETING"]')).text, 'hello', "the sandbox's envs")
    // a matplotlib figure comes back as a PNG
    const plot = await sbx.runCode('import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [4, 1, 9])\nplt.show()')
    const png = plot.results.find((r) => r.png !== undefined)?.png ?? ''
    assert.ok(Buffer.from(png, 'base64').subarray(1, 4).toString() === 'PNG', 'a PNG image')
    // an exception: its name, value and traceback
    const failed = await sbx.runCode('def f():\n    return {}["missing"]\nf()')
    assert.equal(failed.error?.name, 'KeyError')
    assert.equal(failed.error?.value, "'missing'")
    assert.match(failed.error?.traceback ?? '', /line 2, in f/)
    assert.equal((await sbx.runCode('x')).text, '21', 'the exception left the state as it was')
    await streamedRun(sbx)

    // files: text and 1 MiB of binary, round trip; the code sees them
    await sbx.files.write('/home/user/notes.txt', 'a text file\n')
    assert.equal(await sbx.files.read('/home/user/notes.txt'), 'a text file\n')
    const blob = new Uint8Array(1 << 20)
    for (let i = 0; i < blob.length; i++) blob[i] = (i * 2654435761) >>> 24
    await sbx.files.write('data/blob.bin', blob.buffer)
    const back = await sbx.files.read('data/blob.bin', { format: 'bytes' })
    assert.ok(Buffer.from(back).equals(Buffer.from(blob)), '1 MiB back byte for byte')
    assert.equal((await sbx.runCode('len(open("data/blob.bin", "rb").read())')).text, String(1 << 20))
    const listed = (await sbx.files.list('/home/user')).map((e) => `${e.name} ${e.type}`)
    assert.ok(listed.includes('notes.txt file') && listed.includes('data dir'), listed.join(', '))
    assert.equal((await sbx.files.getInfo('data/blob.bin')).size, 1 << 20)
    assert.equal(await sbx.files.makeDir('made'), true)
    assert.equal(await sbx.files.makeDir('made'), false, 'a directory made twice')
    await sbx.files.rename('notes.txt', 'made/notes.txt')
    assert.equal(await sbx.files.exists('notes.txt'), false)
    assert.equal(await sbx.files.exists('made/notes.txt'), true)
    await sbx.files.remove('made')
    assert.equal(await sbx.files.exists('made'), false)
    await assert.rejects(sbx.files.read('/home/user/nothing-here'), (e: Error) => e.name === 'FileNotFoundError')
    await assert.rejects(sbx.files.write('/usr/escape.txt', 'x'), /outside the sandbox's writable places/)

    // a command: exit code 3 and its stderr, in the sandbox (its files, its env)
    const out: string[] = []
    await assert.rejects(
      sbx.commands.run('ls /home/user/data; echo "$GREETING" >&2; exit 3', { onStdout: (d) => void out.push(d) }),
      (e: Error & { exitCode?: number; stderr?: string; stdout?: string }) =>
        e.name === 'CommandExitError' && e.exitCode === 3 && e.stderr === 'hello\n' && e.stdout === 'blob.bin\n'
    )
    assert.equal(out.join(''), 'blob.bin\n', 'stdout streamed to the callback')
    // a background command, listed, then killed
    const bg = await sbx.commands.run('sleep 600', { background: true })
    assert.ok(bg.pid > 0)
    assert.deepEqual(
      (await sbx.commands.list()).map((p) => p.pid),
      [bg.pid]
    )
    assert.equal(await bg.kill(), true)
    await assert.rejects(bg.wait(), (e: Error & { exitCode?: number }) => e.exitCode === -1)
    assert.deepEqual(await sbx.commands.list(), [])
    assert.equal(await sbx.commands.kill(bg.pid), false, 'a process gone is not found')
    // stdin where the SDK sends it
    const cat = await sbx.commands.run('cat', { background: true, stdin: true })
    await cat.sendStdin('typed in\n')
    await cat.closeStdin()
    assert.equal((await cat.wait()).stdout, 'typed in\n')

    // set timeout, info, list, kill, gone
    await sbx.setTimeout(300_000)
    const info = await sbx.getInfo()
    assert.ok(info.endAt.getTime() > Date.now() + 200_000, `its end moved: ${info.endAt.toISOString()}`)
    assert.deepEqual(info.metadata, { suite: 'sdk' })
    const mine = await Sandbox.list({ query: { metadata: { suite: 'sdk' } } }).nextItems()
    assert.deepEqual(
      mine.map((s) => s.sandboxId),
      [sbx.sandboxId]
    )
    const again = await Sandbox.connect(sbx.sandboxId)
    assert.equal((await again.runCode('x')).text, '21', 'connect meets the same state')
    assert.equal(await sbx.isRunning(), true)
  } finally {
    await sbx.kill()
  }
  assert.equal(await sbx.isRunning(), false, 'killed: not running')
  await assert.rejects(sbx.runCode('x'), (e: Error) => e.name === 'TimeoutError', 'gone, as E2B answers a sandbox gone')
  await assert.rejects(Sandbox.getInfo(sbx.sandboxId), (e: Error) => e.name === 'SandboxNotFoundError')
  assert.equal(await Sandbox.kill(sbx.sandboxId), false)
}

describe('the E2B SDK on sandfleet serve, process backend', () => {
  let served: Served
  before(async () => {
    served = await startServe([
      '--backend',
      'process',
      '--pool-size',
      '1',
      '--api-keys',
      `${KEY},${OTHER}`,
      '--max-sessions-per-key',
      '3'
    ])
    useFleet(served.url)
  })
  after(async () => {
    await served?.stop()
  })

  test('a sandbox from create to kill: code with state, a PNG, an exception, files, commands, timeout, gone', async () => {
    await wholeLife()
  })

  test("two API keys cannot see each other's sandboxes", async () => {
    const mine = await Sandbox.create({ timeoutMs: 60_000 })
    try {
      const theirs = { apiKey: OTHER }
      assert.deepEqual(await Sandbox.list(theirs).nextItems(), [])
      await assert.rejects(Sandbox.getInfo(mine.sandboxId, theirs), (e: Error) => e.name === 'SandboxNotFoundError')
      await assert.rejects(Sandbox.connect(mine.sandboxId, theirs), (e: Error) => e.name === 'SandboxNotFoundError')
      await assert.rejects(
        Sandbox.setTimeout(mine.sandboxId, 1000, theirs),
        (e: Error) => e.name === 'SandboxNotFoundError'
      )
      assert.equal(await Sandbox.kill(mine.sandboxId, theirs), false)
      assert.equal((await mine.runCode('1 + 1')).text, '2', 'still there for its own key')
      // the sandbox URL needs its own token: another's is refused
      const res = await fetch(`${process.env.E2B_SANDBOX_URL}/execute`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'e2b-sandbox-id': mine.sandboxId,
          'e2b-sandbox-port': '49999',
          'x-access-token': 'not-its-token'
        },
        body: JSON.stringify({ code: '1' })
      })
      assert.equal(res.status, 401)
      await assert.rejects(
        Sandbox.create({ apiKey: 'not-a-key-at-all' }),
        (e: Error) => e.name === 'AuthenticationError'
      )
    } finally {
      await mine.kill()
    }
  })

  test('a sandbox past its timeout is killed and gone', async () => {
    const short = await Sandbox.create({ timeoutMs: 2_000 })
    await short.commands.run('sleep 600', { background: true })
    await eventually(async () => !(await short.isRunning()), 'the sandbox is gone after its timeout')
    await assert.rejects(Sandbox.getInfo(short.sandboxId), (e: Error) => e.name === 'SandboxNotFoundError')
    assert.deepEqual(
      (await Sandbox.list().nextItems()).filter((s) => s.sandboxId === short.sandboxId),
      []
    )
  })

  test("a key at its runner's limit of sandboxes is answered as E2B answers a full account (429)", async () => {
    const held = await Promise.all(
      [0, 1, 2].map(async () => await Sandbox.create({ apiKey: OTHER, timeoutMs: 60_000 }))
    )
    try {
      await assert.rejects(
        Sandbox.create({ apiKey: OTHER }),
        (e: Error) => e.name === 'RateLimitError' && /maximum number of concurrent E2B sandboxes \(3\)/.test(e.message)
      )
    } finally {
      await Promise.all(held.map(async (s) => await s.kill()))
    }
  })

  test('code contexts: python ones apart, a javascript one keeps its state', async () => {
    const sbx = await Sandbox.create({ timeoutMs: 60_000 })
    try {
      await sbx.runCode('shared = 1')
      const py = await sbx.createCodeContext({ language: 'python', cwd: '/tmp' })
      assert.equal((await sbx.runCode('import os\nos.getcwd()', { context: py })).text, '/tmp')
      assert.equal((await sbx.runCode('shared', { context: py })).error?.name, 'NameError')
      await sbx.runCode('mine = 7', { context: py })
      await sbx.restartCodeContext(py)
      assert.equal((await sbx.runCode('mine', { context: py })).error?.name, 'NameError', 'a restart forgets')
      const js = await sbx.createCodeContext({ language: 'javascript' })
      await sbx.runCode('let n = 40\nconsole.log("set")', { context: js })
      const js2 = await sbx.runCode('n + 2', { context: js })
      assert.equal(js2.text, '42')
      assert.equal((await sbx.runCode('[1, "a"]', { language: 'javascript' })).text, '[ 1, "a" ]')
      assert.equal((await sbx.listCodeContexts()).length, 4)
      await sbx.removeCodeContext(py)
      assert.equal((await sbx.listCodeContexts()).length, 3)
      assert.equal((await sbx.runCode('shared')).text, '1', 'the default context untouched')
    } finally {
      await sbx.kill()
    }
  })
})

describe('the E2B SDK on sandfleet serve, docker backend', () => {
  let served: Served
  before(async () => {
    served = await startServe(['--backend', 'docker', '--pool-size', '1', '--api-keys', KEY])
    useFleet(served.url)
  })
  after(async () => {
    await served?.stop()
  })

  test('a sandbox from create to kill: code with state, a PNG, an exception, files, commands, timeout, gone', async () => {
    const info = (await (await fetch(`${served.url}/v1/info`, { headers: { 'x-api-key': KEY } })).json()) as {
      backends: string[]
    }
    assert.deepEqual(info.backends, ['docker'], 'a docker runner')
    await wholeLife()
  })
})

test('a sandbox whose runner died answers as gone, never as a fresh sandbox', async () => {
  const fleet = await startFleet(['e2b-dies'], { poolSize: 1 }, { apiKeys: [KEY] })
  try {
    useFleet(fleet.url)
    const sbx = await Sandbox.create({ timeoutMs: 60_000 })
    assert.equal((await sbx.runCode('y = 5\ny')).text, '5')
    await streamedRun(sbx) // over the runner's HTTP API
    await fleet.runners[0]?.close()
    await assert.rejects(sbx.runCode('y'), (e: Error) => e.name === 'TimeoutError')
    assert.equal(await sbx.isRunning(), false)
    await assert.rejects(Sandbox.getInfo(sbx.sandboxId), (e: Error) => e.name === 'SandboxNotFoundError')
  } finally {
    await fleet.close()
  }
})
