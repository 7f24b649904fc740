/**
 * The pyodide host process: a child of the runner, started by {@link PyodideHost} with the V8
 * flags its isolates need (`--no-node-snapshot`, `--no-concurrent-recompilation`,
 * `--wasm-max-mem-pages`) and a memory ceiling, so that they apply to it alone. It loads Pyodide
 * once, then hosts the pool's sandboxes ({@link PyodideSandbox}, one isolate each) and runs the
 * runner's requests on them, talking NDJSON frames over fd 3 (pyodide-host-protocol.ts).
 *
 * It never writes to stdout; stderr is read by the runner (a V8 fatal error lands there). When
 * fd 3 ends (the runner closed it, or died) it disposes every isolate and calls `process.exit()`:
 * a process that used wasm isolates can hang at exit otherwise.
 */
import { Socket } from 'node:net'
import { messageOf } from '@sandfleet/protocol/http'
import { FramePipe } from './frame-pipe.ts'
import { PyodideAssets, type Ivm } from './pyodide-assets.ts'
import { pyodideManifest } from './pyodide-manifest.ts'
import type { FromHost, HostInit, HostReply, ToHost } from './pyodide-host-protocol.ts'
import { PyodideSandbox } from './pyodide-sandbox.ts'

/** Since the process started, when this module ran (Node's start and tsx's included). */
const loadedMs = Math.round(process.uptime() * 1000)
const socket = new Socket({ fd: 3, readable: true, writable: true })
const sandboxes = new Map<string, PyodideSandbox>()
let assets: PyodideAssets | undefined
let init: HostInit | undefined
let exiting = false

const pipe = new FramePipe<ToHost, FromHost>(
  socket,
  socket,
  (frame) => {
    void onFrame(frame)
  },
  () => {
    void exit(0)
  }
)

async function onFrame(frame: ToHost): Promise<void> {
  if (frame.op === 'init') {
    await boot(frame)
    return
  }
  const reply: HostReply = { op: 'reply', n: frame.n }
  try {
    if (assets === undefined || init === undefined) throw new Error('the host got a request before init')
    if (frame.op === 'start') {
      if (sandboxes.has(frame.sandbox)) throw new Error(`sandbox ${frame.sandbox} exists`)
      const sandbox = new PyodideSandbox(frame.sandbox, assets, { softGraceMs: init.softGraceMs })
      sandboxes.set(frame.sandbox, sandbox)
      try {
        await sandbox.start()
      } catch (err) {
        sandboxes.delete(frame.sandbox)
        throw err
      }
      reply.stats = await sandbox.measure()
    } else {
      const sandbox = sandboxes.get(frame.sandbox)
      if (frame.op === 'close') {
        sandboxes.delete(frame.sandbox)
        await sandbox?.close()
      } else {
        if (sandbox === undefined) throw new Error(`no sandbox ${frame.sandbox} in this host`)
        reply.outcome = await sandbox.execute(frame.job)
        reply.stats = sandbox.lastStats()
        // Measured after the reply left (it waits for the restore): the next reply carries it.
        void sandbox.measure()
      }
    }
  } catch (err) {
    reply.error = {
      message: messageOf(err),
      ...(typeof (err as { code?: unknown }).code === 'string' ? { code: (err as { code: string }).code } : {})
    }
  }
  pipe.send(reply)
}

async function boot(frame: HostInit): Promise<void> {
  try {
    if (init !== undefined) throw new Error('init sent twice')
    init = frame
    let t = performance.now()
    let ivm: Ivm
    try {
      ivm = (await import('isolated-vm')).default as Ivm
    } catch (err) {
      throw new Error(
        `isolated-vm is not loadable (${messageOf(err)}); run npm install (it builds isolated-vm from source, needs python3, make and a C++ compiler)`
      )
    }
    const loaded = PyodideAssets.load(ivm, {
      packagesZip: frame.packagesZip,
      preimport: frame.preimport,
      warmup: frame.warmup
    })
    const assetsMs = Math.round(performance.now() - t)
    t = performance.now()
    await loaded.prepareSnapshot()
    assets = loaded
    pipe.send({
      op: 'ready',
      pid: process.pid,
      pyodide: loaded.version,
      snapshot: loaded.snapshotSource,
      bootMs: { loaded: loadedMs, assets: assetsMs, snapshot: Math.round(performance.now() - t) },
      manifest: pyodideManifest(loaded.lock, loaded.packages)
    })
  } catch (err) {
    pipe.send({ op: 'fatal', message: messageOf(err) })
    await exit(1)
  }
}

/** Disposes every isolate (after its work in flight), then exits. */
async function exit(code: number): Promise<void> {
  if (exiting) return
  exiting = true
  const closing = Promise.all(
    [...sandboxes.values()].map(async (s) => {
      await s.close().catch(() => {})
    })
  )
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 3000).unref())])
  pipe.end()
  process.exit(code)
}

process.on('uncaughtException', (err) => {
  pipe.send({ op: 'log', level: 'error', message: `pyodide host: ${err.stack ?? err.message}` })
  void exit(70)
})
process.on('unhandledRejection', (err) => {
  pipe.send({ op: 'log', level: 'warn', message: `pyodide host: unhandled rejection: ${messageOf(err)}` })
})
// The runner shuts its host down (it drains first): a Ctrl-C to the terminal's process group is its.
process.on('SIGINT', () => {})
process.on('SIGHUP', () => {})
process.on('SIGTERM', () => {
  void exit(0)
})
