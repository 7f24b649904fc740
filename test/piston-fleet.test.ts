/**
 * The Piston API on a real gateway in front of a real runner (process backend): requests shaped
 * as Piston's clients send them run real code through the gateway's pipeline and router, and are
 * answered in Piston's shapes.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { loadGatewayConfig, startGateway, type RunningGateway } from '@sandfleet/gateway'
import { listenRunner, runnerConfig, silentLogger, type RunnerServer } from '@sandfleet/runner'

let runner: RunnerServer | undefined
let gateway: RunningGateway | undefined
let url = ''
const MAX_TIMEOUT_MS = 5000
const MAX_MEMORY_MB = 2048

before(async () => {
  runner = await listenRunner(
    runnerConfig({ backend: 'process', poolSize: 2, host: '127.0.0.1', port: 0, id: 'piston-a' }),
    { logger: silentLogger }
  )
  gateway = await startGateway({
    config: loadGatewayConfig({
      values: {
        host: '127.0.0.1',
        port: 0,
        runners: [runner.url],
        loadPollMs: 50,
        maxTimeoutMs: MAX_TIMEOUT_MS,
        maxMemoryMb: MAX_MEMORY_MB
      }
    }),
    logger: false
  })
  url = gateway.url
})
after(async () => {
  await gateway?.close()
  await runner?.close()
})

async function execute(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/v2/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: await res.json() }
}

const python = (content: string, more: Record<string, unknown> = {}): Record<string, unknown> => ({
  language: 'python',
  version: '*',
  files: [{ name: 'main.py', content }],
  ...more
})

test("a program runs and its run is Piston's: stdout, output, code 0, no signal, the version the fleet runs", async () => {
  const runtimes = (await (await fetch(`${url}/api/v2/runtimes`)).json()) as Array<{
    language: string
    version: string
  }>
  const { status, body } = await execute(python('print(6 * 7)'))
  assert.equal(status, 200, JSON.stringify(body))
  assert.deepEqual([body.language, body.version], ['python', runtimes.find((r) => r.language === 'python')?.version])
  assert.deepEqual(
    [body.run.stdout, body.run.stderr, body.run.output, body.run.code, body.run.signal, body.run.status],
    ['42\n', '', '42\n', 0, null, null]
  )
  assert.equal(body.compile, undefined, 'python is not compiled')
})

test('an alias and the exact version a client took from a Piston instance run the same', async () => {
  const { status, body } = await execute({
    language: 'py3',
    version: '3.10.0',
    files: [{ content: 'import sys; print(sys.version_info[0])' }]
  })
  assert.equal(status, 200, JSON.stringify(body))
  assert.deepEqual([body.language, body.run.stdout], ['python', '3\n'])
})

test("stdin is the program's standard input; args are its sys.argv after its file's name", async () => {
  assert.equal((await execute(python('print(int(input()) * 2)', { stdin: '21\n' }))).body.run.stdout, '42\n')
  const { body } = await execute(python('import sys\nprint(sys.argv)', { args: ['a', 'b c'] }))
  assert.equal(body.run.stdout, "['main.py', 'a', 'b c']\n", JSON.stringify(body))
  assert.equal(body.run.code, 0)
})

test('the files after the first are written beside the program', async () => {
  const { body } = await execute({
    language: 'python',
    version: '*',
    files: [
      { content: 'import helper; print(helper.X, open("data.bin", "rb").read())' },
      { name: 'helper.py', content: 'X = 5' },
      { name: 'data.bin', content: 'aGk=', encoding: 'base64' }
    ]
  })
  assert.equal(body.run.stdout, "5 b'hi'\n", JSON.stringify(body))
})

test('a runtime error: a non-zero code, the traceback in stderr, status RE', async () => {
  const { status, body } = await execute(python('1 / 0'))
  assert.equal(status, 200)
  assert.equal(body.run.code, 1)
  assert.match(body.run.stderr, /ZeroDivisionError/)
  assert.deepEqual([body.run.signal, body.run.status], [null, 'RE'])
  assert.equal(body.run.output, body.run.stdout + body.run.stderr)
})

test('a run past run_timeout is killed as Piston says it: signal SIGKILL, status TO, no code', async () => {
  const { status, body } = await execute(
    python('import time\nprint("started", flush=True)\ntime.sleep(30)', { run_timeout: 500 })
  )
  assert.equal(status, 200)
  assert.deepEqual(
    [body.run.code, body.run.signal, body.run.status, body.run.message],
    [null, 'SIGKILL', 'TO', 'Time limit exceeded']
  )
  assert.equal(body.run.stdout, 'started\n', 'what it wrote before is kept')
})

test("a run_timeout over the deployment's maxTimeoutMs is Piston's 400, naming the field and the setting; nothing runs", async () => {
  const { status, body } = await execute(python('print(1)', { run_timeout: MAX_TIMEOUT_MS + 1 }))
  assert.equal(status, 400)
  assert.deepEqual(Object.keys(body), ['message'])
  assert.match(body.message, /^run_timeout: .*maxTimeoutMs/)
})

test("bad input is Piston's 400 {message} naming the field: an unknown language, no files", async () => {
  const unknown = await execute({ language: 'cobol', version: '*', files: [{ content: 'x' }] })
  assert.equal(unknown.status, 400)
  assert.match(unknown.body.message, /^language .*cobol.*runtime is unknown/)
  const none = await execute({ language: 'python', version: '*', files: [] })
  assert.deepEqual([none.status, none.body], [400, { message: 'files is required as a non-empty array' }])
  const res = await fetch(`${url}/api/v2/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"language":'
  })
  assert.equal(res.status, 400)
  assert.match(((await res.json()) as { message: string }).message, /not valid JSON/)
})

test("/runtimes lists what the fleet serves, with Piston's aliases; javascript runs in a V8 isolate", async () => {
  const res = await fetch(`${url}/api/v2/runtimes`)
  assert.equal(res.status, 200)
  const runtimes = (await res.json()) as Array<{
    language: string
    version: string
    aliases: string[]
    runtime: string
  }>
  const py = runtimes.find((r) => r.language === 'python')
  assert.ok(
    py !== undefined && py.aliases.includes('py') && py.aliases.includes('python3') && py.runtime === 'cpython',
    JSON.stringify(runtimes)
  )
  assert.match(py.version, /^3(\.\d+)*$/)
  const js = runtimes.find((r) => r.language === 'javascript')
  assert.ok(js !== undefined && js.aliases.includes('node') && js.aliases.includes('js'), JSON.stringify(runtimes))
  const { body } = await execute({ language: 'js', version: '18.15.0', files: [{ content: 'console.log(6 * 7)' }] })
  assert.deepEqual([body.language, body.version, body.run.stdout, body.run.code], ['javascript', js.version, '42\n', 0])
})

test('a program run with args fails as it would alone: its traceback names its file and line', async () => {
  const { body } = await execute(python('x = 1\nraise ValueError("bad")', { args: ['a'] }))
  assert.equal(body.run.code, 1)
  assert.match(body.run.stderr, /File "main\.py", line 2, in <module>\n +raise ValueError\("bad"\)\nValueError: bad\n$/)
})

test("a run past run_memory_limit is Piston's memory ending; a limit over the deployment's maxMemoryMb is a 400 naming run_memory_limit", async () => {
  const { status, body } = await execute(
    python('x = bytearray(512 * 2**20)\nprint(len(x))', { run_memory_limit: 64 * 2 ** 20 })
  )
  assert.equal(status, 200)
  assert.deepEqual([body.run.code, body.run.signal, body.run.status], [null, 'SIGKILL', 'MO'], JSON.stringify(body))
  const over = await execute(python('print(1)', { run_memory_limit: (MAX_MEMORY_MB + 1) * 2 ** 20 }))
  assert.equal(over.status, 400)
  assert.match(over.body.message, /^run_memory_limit: .*maxMemoryMb/)
})
