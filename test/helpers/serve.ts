/**
 * `sandfleet serve` from this checkout, as a user starts it (bin/sandfleet.mjs), in a process group of its own:
 * resolves with its URL once it listens; `stop()` ends the group (call it in `finally`).
 */
import { spawn, type ChildProcess } from 'node:child_process'

/** A started `sandfleet serve`. */
export interface Served {
  url: string
  child: ChildProcess
  /** What it printed so far. */
  output: () => string
  stop(): Promise<void>
}

const BIN = new URL('../../bin/sandfleet.mjs', import.meta.url).pathname

/** Starts `sandfleet serve --port 0 ARGS` (bound to 127.0.0.1). */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', BIN, 'serve', '--host', '127.0.0.1', '--port', '0', ...args],
    {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  let output = ''
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString()
  })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    process.kill(-child.pid, 'SIGTERM')
    const timer = setTimeout(() => {
      try {
        process.kill(-(child.pid as number), 'SIGKILL')
      } catch {}
    }, 20_000)
    await exited
    clearTimeout(timer)
  }
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`serve did not listen within 120 s\n${output}`))
      }, 120_000)
      child.stdout?.on('data', (d: Buffer) => {
        output += d.toString()
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)
        if (m?.[1] !== undefined) {
          clearTimeout(timer)
          resolve(m[1])
        }
      })
      child.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`serve exited ${String(code)}\n${output}`))
      })
    })
    return { url, child, output: () => output, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
