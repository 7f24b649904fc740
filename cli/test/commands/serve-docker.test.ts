// `sandfleet serve --backend docker` without its prerequisites: one line that says how to fix
// it, exit code 1, no stack trace.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../../bin/sandfleet.mjs', import.meta.url))

async function serve(
  args: string[],
  env: Record<string, string> = {}
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--backend', 'docker', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env }
  })
  let output = ''
  child.stdout.on('data', (d: Buffer) => {
    output += d.toString()
  })
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString()
  })
  const timer = setTimeout(() => {
    child.kill('SIGKILL')
  }, 60_000)
  const code = await new Promise<number | null>((resolve) =>
    child.once('exit', (c) => {
      resolve(c)
    })
  )
  clearTimeout(timer)
  return { code, output }
}

const STACK = /^\s+at .+[(:]\d+/m

test('serve --backend docker, the image missing: says how to build it, exits 1, no stack trace', async () => {
  const { code, output } = await serve([
    '--docker-image',
    'sandfleet/not-built:0',
    '--id',
    `startup-noimage-${process.pid}`
  ])
  assert.equal(code, 1, output)
  assert.match(output, /sandfleet serve: the sandbox image sandfleet\/not-built:0 is not in the Docker engine/)
  assert.match(output, /SANDFLEET_DOCKER_IMAGE=sandfleet\/not-built:0 bash sandbox-images\/python\/build-image\.sh/)
  assert.match(output, /docker build -t sandfleet\/not-built:0 sandbox-images\/python/)
  assert.doesNotMatch(output, STACK)
})

test('serve --backend docker, no engine on the socket: says how to start it, exits 1, no stack trace', async () => {
  const { code, output } = await serve(['--id', `startup-noengine-${process.pid}`], {
    DOCKER_HOST: 'unix:///nonexistent/docker.sock'
  })
  assert.equal(code, 1, output)
  assert.match(output, /the Docker engine does not answer on \/nonexistent\/docker\.sock/)
  assert.match(output, /start it \(`dockerd &` or `systemctl start docker`\) and check with `docker info`/)
  assert.doesNotMatch(output, STACK)
})
