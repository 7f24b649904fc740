/**
 * A sandbox's JavaScript code contexts: each one an isolated-vm isolate of its own in the runner (V8 limits its
 * heap and its run's time), whose global scope lasts from run to run as a notebook's does: a top-level `let`, a
 * function, a global set in one run are there in the next. Code sees what the javascript backend's jobs see
 * (docs/javascript-sandbox.md): `console`, no Node API, no network; and nothing of its sandbox's files or processes
 * (those are the sandbox's Python and commands'). A run's value is rendered as Node's REPL shows one, a thrown value
 * is its error; a promise is not awaited (no top-level await).
 */
import { createRequire } from 'node:module'
import type IvmModule from 'isolated-vm'
import { failedResult, type ExecResult } from '@sandfleet/protocol'
import type { SandboxDisplay } from '@sandfleet/protocol'

type Ivm = typeof IvmModule

/** A JavaScript context's heap limit, MiB. */
const HEAP_MB = 128
/** Output kept of one stream of one run. */
const MAX_OUTPUT_CHARS = 1 << 20

/** Evaluated once in each context: its console, the renderer of a run's value, the drain of its output. */
const PRELUDE = `(() => {
  'use strict'
  const out = { stdout: [], stderr: [] }
  const show = (v, depth) => {
    if (typeof v === 'string') return depth === 0 ? v : JSON.stringify(v)
    if (typeof v === 'bigint') return String(v) + 'n'
    if (typeof v === 'function') return '[Function: ' + (v.name || '(anonymous)') + ']'
    if (v === null || typeof v !== 'object') return String(v)
    if (v instanceof Error) return v.stack || String(v)
    if (depth > 2) return Array.isArray(v) ? '[Array]' : '[Object]'
    if (Array.isArray(v)) return '[ ' + v.slice(0, 100).map((x) => show(x, depth + 1)).join(', ') + ' ]'
    const keys = Object.keys(v).slice(0, 100)
    return keys.length === 0 ? '{}' : '{ ' + keys.map((k) => k + ': ' + show(v[k], depth + 1)).join(', ') + ' }'
  }
  const line = (args) => Array.prototype.map.call(args, (a) => show(a, 0)).join(' ') + '\\n'
  globalThis.console = {
    log: function () { out.stdout.push(line(arguments)) },
    info: function () { out.stdout.push(line(arguments)) },
    debug: function () { out.stdout.push(line(arguments)) },
    warn: function () { out.stderr.push(line(arguments)) },
    error: function () { out.stderr.push(line(arguments)) }
  }
  const render = (v) => (v === undefined ? undefined : typeof v === 'string' ? JSON.stringify(v) : show(v, 1))
  const drain = () => {
    const taken = JSON.stringify({ stdout: out.stdout.join(''), stderr: out.stderr.join('') })
    out.stdout = []
    out.stderr = []
    return taken
  }
  return { render, drain }
})()`

interface Held {
  isolate: IvmModule.Isolate
  context: IvmModule.Context
  render: IvmModule.Reference<(value: unknown) => string | undefined>
  drain: IvmModule.Reference<() => string>
}

/** What one run gave, as a sandbox answers it (its `execution_count` added by the caller). */
export interface JsRun {
  result: ExecResult
  results: SandboxDisplay[]
}

const cut = (text: string): [string, boolean] =>
  text.length > MAX_OUTPUT_CHARS ? [text.slice(0, MAX_OUTPUT_CHARS), true] : [text, false]

/** The JavaScript contexts of a runner's sandboxes, by key. */
export class JsContexts {
  #ivm: Ivm | undefined
  #unavailable: string | undefined
  #loaded = false
  readonly #contexts = new Map<string, Held>()

  /** Whether isolated-vm loads in this process (tried once). */
  get available(): boolean {
    this.#load()
    return this.#ivm !== undefined
  }

  /** Why isolated-vm did not load, when it did not. */
  get unavailable(): string | undefined {
    return this.#unavailable
  }

  /**
   * Runs `code` in the context `key` (made on its first run), within `timeoutMs`. `streamed`: its caller sends its
   * output as a stream, and a thrown value's stack is its error alone, not in its stderr.
   */
  async run(key: string, code: string, timeoutMs: number, runner: string, streamed = false): Promise<JsRun> {
    const held = this.#held(key)
    const started = performance.now()
    let value: IvmModule.Reference | undefined
    let error: ExecResult['error'] = null
    let status: ExecResult['status'] = 'ok'
    try {
      const script = await held.isolate.compileScript(code, { filename: 'cell.js' })
      value = (await script.run(held.context, { timeout: timeoutMs, reference: true })) as IvmModule.Reference
    } catch (err) {
      const e = err as { name?: string; message?: string; stack?: string }
      const timedOut = /timed out/i.test(e.message ?? '')
      status = held.isolate.isDisposed ? 'memory' : timedOut ? 'timeout' : 'error'
      error = { type: timedOut ? 'TimeoutError' : (e.name ?? 'Error'), message: e.message ?? String(err) }
      if (e.stack !== undefined) error.traceback = e.stack
    }
    if (held.isolate.isDisposed) {
      this.#contexts.delete(key)
      return { result: failedResult('memory', 'MemoryError', 'the context passed its heap limit'), results: [] }
    }
    let text: string | undefined
    if (value !== undefined) {
      text = held.render.applySync(undefined, [value.derefInto()], { timeout: timeoutMs })
      value.release()
    }
    const drained = JSON.parse(held.drain.applySync(undefined, [])) as { stdout: string; stderr: string }
    const [stdout, cutOut] = cut(drained.stdout)
    const [stderr0, cutErr] = cut(drained.stderr)
    const stderr =
      error === null || streamed ? stderr0 : `${stderr0}${error.traceback ?? `${error.type}: ${error.message}`}\n`
    return {
      result: {
        status,
        stdout,
        stderr,
        exit_code: status === 'ok' ? 0 : 1,
        duration_ms: performance.now() - started,
        queue_ms: 0,
        truncated: { stdout: cutOut, stderr: cutErr },
        error,
        files: {},
        runner,
        sandbox: `js-${key}`
      },
      results: text === undefined ? [] : [{ data: { 'text/plain': text }, main: true }]
    }
  }

  /** Drops a context (its state with it); the next run with its key makes a fresh one. */
  drop(key: string): void {
    const held = this.#contexts.get(key)
    this.#contexts.delete(key)
    if (held !== undefined && !held.isolate.isDisposed) held.isolate.dispose()
  }

  /** Drops every context. */
  close(): void {
    for (const key of [...this.#contexts.keys()]) this.drop(key)
  }

  #held(key: string): Held {
    const found = this.#contexts.get(key)
    if (found !== undefined) return found
    const ivm = this.#ivm as Ivm
    const isolate = new ivm.Isolate({ memoryLimit: HEAP_MB })
    const context = isolate.createContextSync()
    const parts = isolate.compileScriptSync(PRELUDE).runSync(context, { reference: true }) as IvmModule.Reference<{
      render: (value: unknown) => string | undefined
      drain: () => string
    }>
    const held: Held = {
      isolate,
      context,
      render: parts.getSync('render', { reference: true }) as Held['render'],
      drain: parts.getSync('drain', { reference: true }) as Held['drain']
    }
    this.#contexts.set(key, held)
    return held
  }

  #load(): void {
    if (this.#loaded) return
    this.#loaded = true
    try {
      this.#ivm = createRequire(import.meta.url)('isolated-vm') as Ivm
    } catch (err) {
      this.#unavailable = err instanceof Error ? err.message : String(err)
    }
  }
}
