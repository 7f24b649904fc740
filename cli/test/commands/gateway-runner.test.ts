import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../../bin/sandfleet.mjs', import.meta.url))

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Starts `sandfleet ARGS` and resolves once a line of its output matches `ready`. */
async function start(args: string[], ready: RegExp): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandfleet ${args[0]} did not get ready: ${out}`)), 30_000)
    const onData = (d: Buffer): void => {
      out += d.toString()
      if (ready.test(out)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`sandfleet ${args[0]} exited ${String(code)}: ${out}`))
    })
  })
  return { child, output: () => out }
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  child.kill('SIGTERM')
  return await exited
}

test('sandfleet runner and sandfleet gateway --runners run apart and serve a call; both stop cleanly on SIGTERM', async () => {
  const [runnerPort, gatewayPort] = [await freePort(), await freePort()]
  const runner = await start(
    ['runner', '--backend', 'process', '--pool-size', '1', '--port', String(runnerPort), '--id', 'cli-runner'],
    /runner listening/
  )
  let gateway: Awaited<ReturnType<typeof start>> | undefined
  try {
    assert.match(runner.output(), /backend process/, 'the runner says which backend it chose')
    gateway = await start(
      ['gateway', '--runners', `http://127.0.0.1:${runnerPort}`, '--port', String(gatewayPort)],
      /sandfleet gateway serving/
    )
    const res = await fetch(`http://127.0.0.1:${gatewayPort}/v1/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'print(2 + 2)' })
    })
    const body = (await res.json()) as { status: string; stdout: string; runner: string }
    assert.deepEqual([body.status, body.stdout, body.runner], ['ok', '4\n', 'cli-runner'])
  } finally {
    if (gateway !== undefined) assert.equal(await stop(gateway.child), 0)
    assert.equal(await stop(runner.child), 0)
  }
})

test('sandfleet gateway without runners exits 1 saying how to give them', async () => {
  const child = spawn(process.execPath, [BIN, 'gateway', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  assert.equal(code, 1)
  assert.match(err, /no runners: pass --runners/)
})

test('sandfleet bench runs the harness: an unknown scenario exits 2 with the list of scenarios', async () => {
  const child = spawn(process.execPath, [BIN, 'bench', 'no-such-scenario'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString()
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  assert.equal(code, 2)
  assert.match(err, /unknown scenario no-such-scenario[\s\S]*trivial-c64/)
})
