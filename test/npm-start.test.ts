// `npm start` stopped as a process manager or a script stops it: SIGTERM to the npm process
// (not to its process group, as a terminal's Ctrl-C is). Everything it started stops: the server
// closes its port, exits, and leaves no sandbox process behind. (npm runs the script with `sh -c`;
// dash forks the command unless the script says `exec`, and npm's forwarded signal then stopped
// only the shell.)
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

/** The pids of `pid`'s descendants, from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // The parent is the 2nd field after the command, which is in parentheses and may hold spaces.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {} // gone meanwhile
  }
  const out: number[] = []
  const walk = (p: number): void => {
    for (const [child, parent] of parents)
      if (parent === p) {
        out.push(child)
        walk(child)
      }
  }
  walk(pid)
  return out
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until `check` holds, up to `limitMs` (a generous limit: the contract, not the speed). */
async function eventually(check: () => boolean, limitMs = 60_000): Promise<boolean> {
  const end = Date.now() + limitMs
  while (Date.now() < end) {
    if (check()) return true
    await sleep(100)
  }
  return check()
}

test('npm start: SIGTERM to the npm process stops the server, closes its port and leaves no sandbox running', async () => {
  const npm = spawn(
    'npm',
    ['start', '--', '--host', '127.0.0.1', '--port', '0', '--backend', 'process', '--pool-size', '2'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'warn' }
    }
  )
  let output = ''
  const serving = new Promise<{ url: string; pid: number }>((resolve, reject) => {
    npm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk
      for (const line of output.split('\n')) {
        if (!line.includes('sandfleet serving on')) continue
        const { url, pid } = JSON.parse(line) as { url: string; pid: number }
        resolve({ url, pid })
      }
    })
    npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    npm.once('exit', (code) => {
      reject(new Error(`npm start exited (${String(code)}) before serving:\n${output}`))
    })
  })
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()))
  let server: { url: string; pid: number } | undefined
  try {
    server = await serving
    assert.notEqual(server.pid, npm.pid, 'the server is a process of its own')
    const sandboxes = descendants(server.pid).filter((p) => {
      try {
        return /bwrap|python/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'))
      } catch {
        return false
      }
    })
    assert.ok(sandboxes.length >= 2, `the server holds its sandboxes (${sandboxes.length})`)
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200)

    npm.kill('SIGTERM')
    await exited
    const { pid } = server
    assert.ok(await eventually(() => !alive(pid)), `the server (pid ${pid}) exited:\n${output}`)
    await assert.rejects(fetch(`${server.url}/healthz`), 'its port is closed')
    assert.ok(
      await eventually(() => sandboxes.every((p) => !alive(p))),
      `no sandbox process is left: ${sandboxes.filter(alive).join(', ')}`
    )
  } finally {
    if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL')
    if (server !== undefined && alive(server.pid)) process.kill(server.pid, 'SIGKILL')
  }
})
