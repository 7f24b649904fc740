/**
 * The servers a benchmark runs against, as child processes on 127.0.0.1 with a port the kernel
 * picks: a real `sandfleet serve` (its URL read from its "sandfleet serving…" log line), or the
 * naive baseline (naive-server.ts, which prints `{"url": …}`). Or an existing fleet by URL.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

/** Repository root (benchmarks/src/../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** A server the harness talks to. */
export interface Server {
  /** `http://127.0.0.1:PORT`. */
  url: string
  /** What it is, for the report: the command line, or `--url`. */
  description: string
  /** The isolation the fleet reported at start-up, when known. */
  isolation?: string
  /** Sandboxes of the Python pool, from the fleet's `/metrics`, when known. */
  poolSize?: number
  /** Process id of the server the harness started (its process tree is the fleet's CPU); none for `--url`. */
  pid?: number
  /**
   * The fleet's node processes the harness started, by role (their peak memory is reported; their trees' CPU is the
   * fleet's).
   */
  processes?: Array<{ name: string; pid: number }>
  /** Where the runners' /metrics are, when not at `url` (a gateway in front of runner processes). */
  runnerUrls?: string[]
  /** Stops it (a no-op for an existing fleet). Idempotent. */
  close(): Promise<void>
}

/** An existing fleet; never stopped by the harness. */
export function existingServer(url: string): Server {
  return { url: url.replace(/\/+$/, ''), description: `existing fleet at ${url}`, close: async () => {} }
}

/** Starts `sandfleet serve --host 127.0.0.1 --port PORT …args` (0: a free port) and waits until it serves. */
export async function startServe(args: readonly string[], startTimeoutMs = 180_000, port = 0): Promise<Server> {
  // --no-node-snapshot as bin/sandfleet.mjs wants it (isolate backends), so the shim does not re-exec.
  const argv = [
    '--no-node-snapshot',
    fileURLToPath(new URL('../../bin/sandfleet.mjs', import.meta.url)),
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    ...args
  ]
  const child = spawn(process.execPath, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: process.env })
  const line = await waitForLine(
    child,
    (obj) => typeof obj.msg === 'string' && obj.msg.startsWith('sandfleet serving') && typeof obj.url === 'string',
    startTimeoutMs,
    'sandfleet serve'
  )
  const isolation = line.isolation as { boundary?: string; driver?: string } | undefined
  const url = line.url as string
  return {
    poolSize: await pythonPoolSize(url),
    url,
    description: `sandfleet serve --host 127.0.0.1 --port ${port}${args.length > 0 ? ' ' + args.join(' ') : ''}`,
    isolation: isolation === undefined ? undefined : `${isolation.driver ?? '?'}: ${isolation.boundary ?? '?'}`,
    pid: child.pid,
    processes: child.pid === undefined ? [] : [{ name: 'sandfleet serve (gateway and runner)', pid: child.pid }],
    close: stopper(child)
  }
}

/**
 * Starts `runners` `sandfleet runner` processes and a `sandfleet gateway --runners …` in front of
 * them, each on 127.0.0.1 with a port the kernel picks (the gateway on `gatewayPort` when it is not 0); resolves when
 * the gateway serves.
 */
export async function startSplitFleet(
  runners: number,
  runnerArgs: readonly string[],
  gatewayArgs: readonly string[],
  startTimeoutMs = 180_000,
  gatewayPort = 0
): Promise<Server> {
  const bin = fileURLToPath(new URL('../../bin/sandfleet.mjs', import.meta.url))
  const stops: Array<() => Promise<void>> = []
  const close = async (): Promise<void> => {
    await Promise.all(stops.map((s) => s()))
  }
  const start = async (args: string[], msg: string, what: string): Promise<{ child: ChildProcess; url: string }> => {
    const child = spawn(process.execPath, ['--no-node-snapshot', bin, ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: process.env
    })
    stops.push(stopper(child))
    const line = await waitForLine(
      child,
      (obj) => typeof obj.msg === 'string' && obj.msg.startsWith(msg) && typeof obj.url === 'string',
      startTimeoutMs,
      what
    )
    return { child, url: line.url as string }
  }
  try {
    const started = await Promise.all(
      Array.from(
        { length: runners },
        async (_, i) =>
          await start(
            ['runner', '--host', '127.0.0.1', '--port', '0', ...runnerArgs],
            'runner listening',
            `sandfleet runner ${i + 1}`
          )
      )
    )
    const gateway = await start(
      [
        'gateway',
        '--host',
        '127.0.0.1',
        '--port',
        String(gatewayPort),
        '--runners',
        started.map((r) => r.url).join(','),
        ...gatewayArgs
      ],
      'sandfleet gateway serving',
      'sandfleet gateway'
    )
    return {
      url: gateway.url,
      description: `sandfleet gateway${gatewayArgs.length > 0 ? ' ' + gatewayArgs.join(' ') : ''} and ${runners} × sandfleet runner${runnerArgs.length > 0 ? ' ' + runnerArgs.join(' ') : ''}, each its own process`,
      pid: gateway.child.pid,
      processes: [gateway, ...started].flatMap((p, i) =>
        p.child.pid === undefined ? [] : [{ name: i === 0 ? 'gateway' : `runner ${i}`, pid: p.child.pid }]
      ),
      runnerUrls: started.map((r) => r.url),
      close
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** The `sandfleet_runner_pool_size{language="python"}` gauge of a fleet, or undefined. */
export async function pythonPoolSize(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(`${url}/metrics`)
    const m = /^sandfleet_runner_pool_size\{[^}]*language="python"[^}]*\} (\d+)$/m.exec(await res.text())
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/** Starts the naive baseline server (spawns `python -c` per call) and waits for its URL. */
export async function startNaive(python: string): Promise<Server> {
  const script = fileURLToPath(new URL('naive-server.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--python', python], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const line = await waitForLine(child, (obj) => typeof obj.url === 'string', 60_000, 'naive baseline')
  return {
    url: line.url as string,
    description: `node:http + spawn("${python}", ["-c", code]) per call (benchmarks/src/naive-server.ts), no sandbox`,
    pid: child.pid,
    close: stopper(child)
  }
}

/**
 * Starts the fork-on-demand prototype issue 2 states its targets beside (fork-prototype.ts), its
 * Python process importing `preload` (comma-separated, may be empty) before it serves.
 */
export async function startForkPrototype(python: string, preload: string): Promise<Server> {
  const script = fileURLToPath(new URL('fork-prototype.ts', import.meta.url))
  const child = spawn(process.execPath, ['--import', 'tsx', script, '--python', python, '--preload', preload], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const line = await waitForLine(child, (obj) => typeof obj.url === 'string', 120_000, 'fork prototype')
  const what = preload === '' ? 'nothing preloaded' : `${preload} preloaded`
  return {
    url: line.url as string,
    description: `node:http + one ${python} forking a child per call on demand, NDJSON pipes (benchmarks/src/fork-prototype.ts, ${what}), no sandbox`,
    pid: child.pid,
    close: stopper(child)
  }
}

/** Reads JSON lines from the child's stdout until one matches; rejects when it exits first. */
function waitForLine(
  child: ChildProcess,
  match: (obj: Record<string, unknown>) => boolean,
  timeoutMs: number,
  what: string
): Promise<Record<string, unknown>> {
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => {
    if (stderr.length < 8192) stderr += chunk
  })
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    let tail = ''
    const timer = setTimeout(() => {
      fail(new Error(`${what} did not start within ${timeoutMs} ms; output: ${tail}${stderr}`))
    }, timeoutMs)
    const fail = (err: Error): void => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(err)
    }
    lines.on('line', (text) => {
      tail = (tail + text + '\n').slice(-4096)
      let obj: unknown
      try {
        obj = JSON.parse(text)
      } catch {
        return
      }
      if (typeof obj === 'object' && obj !== null && match(obj as Record<string, unknown>)) {
        clearTimeout(timer)
        // Keep draining stdout so the child never blocks on a full pipe.
        child.stdout?.resume()
        resolve(obj as Record<string, unknown>)
      }
    })
    child.once('exit', (code, signal) => {
      fail(new Error(`${what} exited (${signal ?? code}) before serving; output: ${tail}${stderr}`))
    })
    child.once('error', (err) => {
      fail(err)
    })
  })
}

/** SIGTERM, then SIGKILL after 10 s; resolves when the child has exited. */
function stopper(child: ChildProcess): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () =>
    (closing ??= new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        resolve()
        return
      }
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000)
      child.once('exit', () => {
        clearTimeout(kill)
        resolve()
      })
      child.kill('SIGTERM')
    }))
}
