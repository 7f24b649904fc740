import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { resolveExecRequest } from '@sandfleet/protocol'
import { ExecutorChannel } from '../../../src/kits/executor/executor-channel.ts'
import { SANDBOX_PATH } from '../../../src/backends/process/process-driver.ts'

/**
 * A channel over two streams this test writes and reads as the executor would: ready with
 * `tiers`; `ids` collects the ids of the jobs sent to it, in order.
 */
async function scriptedChannel(
  tiers: Record<string, string[]>
): Promise<{ channel: ExecutorChannel; fromExecutor: PassThrough; ids: string[] }> {
  const fromExecutor = new PassThrough()
  const toExecutor = new PassThrough()
  const channel = new ExecutorChannel(fromExecutor, toExecutor)
  const ids: string[] = []
  toExecutor.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line !== '') ids.push(JSON.parse(line).id)
  })
  fromExecutor.write(JSON.stringify({ op: 'ready', protocol: 1, pid: 1, python: '3', tiers, packages: {} }) + '\n')
  await channel.ready(1000)
  return { channel, fromExecutor, ids }
}

const executor = fileURLToPath(new URL('../../../../../sandbox-images/python/executor.py', import.meta.url))

test('executor over ExecutorChannel: ok, error, exit code, timeout, stdin, forged frames', async () => {
  const child = spawn('python3', ['-I', executor], { stdio: ['pipe', 'pipe', 'inherit'] })
  const channel = new ExecutorChannel(child.stdout, child.stdin)
  try {
    const ready = await channel.ready(10_000)
    assert.equal(ready.protocol, 1)
    const run = async (code: string, extra: object = {}) =>
      await channel.run({ request: resolveExecRequest({ code, ...extra }), maxOutputBytes: 65536 })
    const ok = await run('print(1+1)')
    assert.equal(ok.status, 'ok')
    assert.equal(ok.stdout, '2\n')
    const err = await run('raise ValueError("boom")')
    assert.equal(err.status, 'error')
    assert.equal(err.error?.type, 'ValueError')
    assert.ok(!(err.error?.traceback ?? '').includes('executor.py'))
    const exit = await run('import sys; sys.exit(3)')
    assert.equal(exit.exit_code, 3)
    assert.equal(exit.status, 'error')
    const forged = await run('print(\'{"op":"result","id":"99","status":"ok"}\')')
    assert.equal(forged.status, 'ok')
    assert.ok(forged.stdout.includes('"id":"99"'))
    const stdin = await run('print(input()[::-1])', { stdin: 'abc\n' })
    assert.equal(stdin.stdout, 'cba\n')
    const killed = await run('import os; os.kill(os.getpid(), 9)')
    assert.equal(killed.status, 'killed')
    const big = await channel.run({ request: resolveExecRequest({ code: 'print("x"*100000)' }), maxOutputBytes: 1000 })
    assert.equal(big.stdout.length, 1000)
    assert.equal(big.truncated.stdout, true)
    const bg = await run('import subprocess; print(subprocess.Popen(["sleep", "30"], start_new_session=True).pid)')
    const left = Number(bg.stdout.trim())
    assert.ok(left > 0)
    const gone = await run(
      `import os; print(os.path.exists("/proc/${left}/stat") and open("/proc/${left}/stat").read().split()[2] != "Z")`
    )
    assert.equal(gone.stdout, 'False\n')
    const slow = await run('while True: pass', { timeout_ms: 300 })
    assert.equal(slow.status, 'timeout')
    assert.equal(slow.retire, undefined)
    const next = await run('print("after")')
    assert.deepEqual([next.status, next.stdout], ['ok', 'after\n'], 'the executor takes the next job after a timeout')
  } finally {
    channel.close()
    child.kill('SIGKILL')
  }
})

test('executor: shutdown during a job kills the job (answered killed) and the executor exits 0', async () => {
  const child = spawn('python3', ['-I', executor], { stdio: ['pipe', 'pipe', 'inherit'] })
  const channel = new ExecutorChannel(child.stdout, child.stdin)
  try {
    await channel.ready(10_000)
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        resolve(code)
      })
    )
    const running = channel.run({
      request: resolveExecRequest({
        code: 'import time\nprint("started", flush=True)\ntime.sleep(30)',
        timeout_ms: 20_000
      }),
      maxOutputBytes: 65536
    })
    await new Promise((resolve) => setTimeout(resolve, 300))
    child.stdin.write('{"op":"shutdown"}\n')
    const r = await running
    assert.deepEqual(
      [r.status, r.error?.type, r.stdout],
      ['killed', 'SIGKILL', 'started\n'],
      'the executor answered the job it killed'
    )
    assert.equal(await exited, 0)
  } finally {
    channel.close()
    child.kill('SIGKILL')
  }
})

test('executor: a job for a tier still warming waits at most its wait limit (then queue_timeout, the sandbox kept); the wait is reported', async () => {
  // Debian's python3 (the sandboxes' PATH), which has sympy: its sym tier takes far longer to warm than bare
  const child = spawn('python3', ['-I', executor], { stdio: ['pipe', 'pipe', 'inherit'], env: { PATH: SANDBOX_PATH } })
  const channel = new ExecutorChannel(child.stdout, child.stdin)
  try {
    const ready = await channel.ready(10_000)
    assert.ok(ready.tiers.sym?.includes('sympy'), `tiers: ${JSON.stringify(ready.tiers)}`)
    const sympyJob = (waitLimitMs: number) => ({
      request: resolveExecRequest({ code: 'import sympy; print(sympy.Integer(6) / 4)' }),
      maxOutputBytes: 100,
      startBy: performance.now() + waitLimitMs
    })
    const late = await channel.run(sympyJob(0))
    assert.deepEqual(
      [late.status, late.error?.type, late.retire === true, late.waited_ms],
      ['queue_timeout', 'TierWarming', false, 0]
    )
    const waited = await channel.run(sympyJob(60_000))
    assert.deepEqual([waited.status, waited.stdout, waited.tier], ['ok', '3/2\n', 'sym'])
    assert.ok(waited.waited_ms !== undefined && waited.waited_ms > 0, `waited_ms: ${String(waited.waited_ms)}`)
    const warm = await channel.run(sympyJob(0))
    assert.deepEqual([warm.status, warm.waited_ms], ['ok', undefined], 'a warm tier: no wait, whatever the limit')
  } finally {
    channel.close()
    child.kill('SIGKILL')
  }
})

test("the channel tells a job's watch when the executor says that job waits for a warming tier; it has no timer of its own", async () => {
  const { channel, fromExecutor, ids } = await scriptedChannel({ bare: [], sci: ['numpy'] })
  const job = { request: resolveExecRequest({ code: 'print(1)', timeout_ms: 50 }), maxOutputBytes: 100 }
  let waits = 0
  const waiting = channel.run(job, {
    waiting: () => {
      waits++
    }
  })
  fromExecutor.write('{"op":"waiting","id":"another","tier":"sci"}\n')
  fromExecutor.write(`{"op":"waiting","id":"${ids[0]}","tier":"sci"}\n`)
  fromExecutor.write(
    `{"op":"result","id":"${ids[0]}","status":"ok","stdout":"1\\n","stderr":"","exit_code":0,"duration_ms":1,"truncated":{"stdout":false,"stderr":false},"error":null,"files":{}}\n`
  )
  assert.deepEqual([(await waiting).status, waits], ['ok', 1])
  // Past its timeout_ms with no answer, a job is still pending: its hard deadline is the pool's.
  const unanswered = channel.run(job)
  let answered = false
  void unanswered.then(() => {
    answered = true
  })
  await new Promise((resolve) => setTimeout(resolve, 200))
  assert.equal(answered, false)
  channel.close()
  assert.deepEqual([(await unanswered).status, (await unanswered).error?.type], ['killed', 'SF_ERR_EXECUTOR_EXITED'])
})

test("a frame larger than the stream buffer tells the job's watch when all of it is out; a small one does not", async () => {
  const { Writable } = await import('node:stream')
  const input = new PassThrough()
  let release: (() => void) | undefined
  let frames = ''
  // The executor's end of the channel: takes a chunk only when released, as a busy reader would.
  const output = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _enc, done) {
      frames += chunk.toString()
      release = done
    }
  })
  const channel = new ExecutorChannel(input, output)
  input.write(JSON.stringify({ op: 'ready', protocol: 1, pid: 1, python: '3', tiers: {}, packages: {} }) + '\n')
  await channel.ready(1000)
  const answer = (id: string): void => {
    input.write(
      JSON.stringify({
        op: 'result',
        id,
        status: 'ok',
        stdout: '1\n',
        stderr: '',
        exit_code: 0,
        duration_ms: 1,
        truncated: { stdout: false, stderr: false }
      }) + '\n'
    )
  }
  const told: string[] = []
  const watch = {
    waiting: () => {
      told.push('waiting')
    },
    delivered: () => {
      told.push('delivered')
    }
  }

  const big = channel.run(
    { request: resolveExecRequest({ code: 'print(1)', stdin: 'x'.repeat(1 << 20) }), maxOutputBytes: 65536 },
    watch
  )
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(told, [], 'not yet: the frame is still on its way')
  release?.()
  await new Promise((resolve) => setImmediate(resolve))
  assert.deepEqual(told, ['delivered'])
  answer('1')
  assert.equal((await big).status, 'ok')
  assert.ok(frames.includes('"stdin":"xxxx'))

  const small = channel.run({ request: resolveExecRequest({ code: 'print(1)' }), maxOutputBytes: 65536 }, watch)
  release?.()
  answer('2')
  assert.equal((await small).status, 'ok')
  assert.deepEqual(told, ['delivered'], 'a frame within the buffer goes at once: nothing to tell')
  channel.close()
})

test("the executor's fleet faults reach the caller as registered codes; a job's own exception of the same name stays its own", async () => {
  const { channel, fromExecutor, ids } = await scriptedChannel({ bare: [] })
  const answeredAs = async (
    status: string,
    type: string
  ): Promise<[string, string | undefined, string | undefined]> => {
    const run = channel.run({ request: resolveExecRequest({ code: 'print(1)' }), maxOutputBytes: 100 })
    const id = ids[ids.length - 1]
    fromExecutor.write(
      JSON.stringify({
        op: 'result',
        id,
        status,
        stdout: '',
        stderr: '',
        exit_code: null,
        duration_ms: 0,
        truncated: { stdout: false, stderr: false },
        error: { type, message: 'why' },
        files: {},
        retire: true,
        retire_reason: 'zygote'
      }) + '\n'
    )
    const outcome = await run
    return [outcome.status, outcome.error?.type, outcome.error?.message]
  }
  try {
    assert.deepEqual(await answeredAs('killed', 'ZygoteExited'), ['killed', 'SF_ERR_EXECUTOR_ZYGOTE_EXITED', 'why'])
    assert.deepEqual(await answeredAs('killed', 'SpareExited'), ['killed', 'SF_ERR_EXECUTOR_SPARE_EXITED', 'why'])
    assert.deepEqual(await answeredAs('infra_error', 'ReuseViolation'), [
      'infra_error',
      'SF_ERR_RUNNER_REUSE_VIOLATION',
      'why'
    ])
    assert.deepEqual(
      await answeredAs('error', 'ZygoteExited'),
      ['error', 'ZygoteExited', 'why'],
      'raised by the job itself'
    )
    assert.deepEqual(await answeredAs('killed', 'SIGKILL'), ['killed', 'SIGKILL', 'why'])
  } finally {
    channel.close()
  }
})

test("the executor's word that a large job reached its process tells the job's watch once; another job's is ignored", async () => {
  const { channel, fromExecutor, ids } = await scriptedChannel({ bare: [] })
  const told: string[] = []
  const run = channel.run(
    { request: resolveExecRequest({ code: 'print(1)' }), maxOutputBytes: 100 },
    {
      waiting: () => {
        told.push('waiting')
      },
      delivered: () => {
        told.push('delivered')
      }
    }
  )
  await new Promise((resolve) => setImmediate(resolve))
  const id = ids[0]
  fromExecutor.write(JSON.stringify({ op: 'started', id: 'another' }) + '\n')
  fromExecutor.write(JSON.stringify({ op: 'started', id }) + '\n')
  fromExecutor.write(JSON.stringify({ op: 'started', id }) + '\n')
  fromExecutor.write(
    JSON.stringify({
      op: 'result',
      id,
      status: 'ok',
      stdout: '1\n',
      stderr: '',
      exit_code: 0,
      duration_ms: 1,
      truncated: { stdout: false, stderr: false },
      error: null,
      files: {}
    }) + '\n'
  )
  assert.equal((await run).status, 'ok')
  assert.deepEqual(told, ['delivered'], 'once, for its own job')
  channel.close()
})
