/**
 * The runner's handle on one pyodide host process (pyodide-host-main.ts): spawns it with its
 * flags (and inside its cgroup, when given), sends `init`, waits for `ready`, then correlates
 * numbered requests with their replies. When the host exits — on its own, killed, or closed —
 * every request in flight rejects with `SF_ERR_RUNNER_SANDBOX_FAILED` (a fault of the fleet: the
 * pool answers `infra_error` and replaces the sandbox) and the exit listeners run once.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Duplex } from 'node:stream'
import type { Logger } from '../../logger.ts'
import type { ExecutorCommand } from '../../sandbox/contract.ts'
import { FramePipe } from './frame-pipe.ts'
import type { FromHost, HostInit, HostReady, HostReply, HostRequest, ToHost } from './pyodide-host-protocol.ts'
import { RunnerError } from '../../errors.ts'

/**
 * The host's entry: pyodide-host-main.ts as built into the CLI's bundle when the CLI runs from
 * one (bin/sandfleet.mjs names it in `_SANDFLEET_BUNDLE_PYODIDE_HOST`), else pyodide-host.cjs,
 * which registers tsx and runs the source.
 */
export const HOST_ENTRY =
  process.env._SANDFLEET_BUNDLE_PYODIDE_HOST ?? new URL('./pyodide-host.cjs', import.meta.url).pathname

/** Options of {@link PyodideHost.start}. */
export interface PyodideHostOptions {
  /** How the host prepares Pyodide. */
  init: Omit<HostInit, 'op'>
  /** Node's flags for the host (pyodide-host-limits.ts). */
  nodeArgs: readonly string[]
  /** Variables for the host's environment beside the runner's (pyodide-host-limits.ts). */
  env?: Readonly<Record<string, string>>
  /** Wraps the host's command (a cgroup's `wrap`), when given. */
  wrap?: (command: ExecutorCommand) => ExecutorCommand
  logger: Logger
  /** Longest wait for `ready` (a first start makes the memory snapshot: a cold boot of seconds). */
  readyTimeoutMs?: number
}

interface Pending {
  resolve: (reply: HostReply) => void
  reject: (err: Error) => void
}

/** An error of the fleet (the host is gone), with its stable code. */
function hostError(message: string): Error {
  return new RunnerError('SF_ERR_RUNNER_SANDBOX_FAILED', message)
}

/** One host process; see the module comment. */
export class PyodideHost {
  readonly #child: ChildProcess
  readonly #pipe: FramePipe<FromHost, ToHost>
  readonly #pending = new Map<number, Pending>()
  readonly #exitListeners = new Set<(why: string) => void>()
  readonly #exited: Promise<void>
  readonly #log: Logger
  #n = 0
  #gone: string | undefined
  #closing = false
  #stderr = ''
  #ready: { resolve: (r: HostReady) => void; reject: (e: Error) => void } | undefined
  /** What the host said when it was ready (undefined before). */
  info: HostReady | undefined

  private constructor(options: PyodideHostOptions) {
    this.#log = options.logger
    let command: ExecutorCommand = { file: process.execPath, args: [...options.nodeArgs, HOST_ENTRY] }
    if (options.wrap !== undefined) command = options.wrap(command)
    // The runner's environment without its SANDFLEET_* settings (API keys among them): the host needs none.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SANDFLEET_')))
    this.#child = spawn(command.file, command.args, {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      env: { ...env, ...options.env, ...command.env }
    })
    this.#child.stderr?.setEncoding('utf8')
    this.#child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4096)
    })
    const fd3 = this.#child.stdio[3] as Duplex
    // A pipe that ends or carries garbage while the host runs: the host cannot answer any more.
    // Its exit usually follows at once (and says why better): killed if it has not within a second.
    this.#pipe = new FramePipe<FromHost, ToHost>(
      fd3,
      fd3,
      (frame) => {
        this.#onFrame(frame)
      },
      (why) => {
        if (this.#closing || this.#gone !== undefined) return
        setTimeout(() => {
          if (this.#gone === undefined) this.kill(`its pipe ended (${why})`)
        }, 1000).unref()
      }
    )
    this.#exited = new Promise((resolve) => {
      this.#child.once('close', (code, signal) => {
        this.#onExit(signal !== null ? `signal ${signal}` : `code ${String(code)}`)
        resolve()
      })
      this.#child.once('error', (err) => {
        this.#onExit(`spawn failed: ${err.message}`)
        resolve()
      })
    })
  }

  /** Spawns a host and resolves once it is ready; rejects (the host killed) with why it is not. */
  static async start(options: PyodideHostOptions): Promise<PyodideHost> {
    const host = new PyodideHost(options)
    const timeoutMs = options.readyTimeoutMs ?? 180_000
    let timer: NodeJS.Timeout | undefined
    try {
      host.info = await new Promise<HostReady>((resolve, reject) => {
        host.#ready = { resolve, reject }
        timer = setTimeout(() => {
          reject(new Error(`the pyodide host was not ready within ${timeoutMs} ms`))
        }, timeoutMs)
        host.#pipe.send({ op: 'init', ...options.init })
      })
      return host
    } catch (err) {
      host.kill()
      await host.#exited
      throw err
    } finally {
      clearTimeout(timer)
      host.#ready = undefined
    }
  }

  /** The host's process id. */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /** True until the host exits or is killed. */
  get alive(): boolean {
    return this.#gone === undefined
  }

  /** Sends one request; resolves with its reply, rejects (`SF_ERR_RUNNER_SANDBOX_FAILED`) if the host goes first. */
  async request(request: HostRequest): Promise<HostReply> {
    if (this.#gone !== undefined) throw hostError(`the pyodide host process is gone (${this.#gone})`)
    const n = ++this.#n
    return await new Promise<HostReply>((resolve, reject) => {
      this.#pending.set(n, { resolve, reject })
      this.#pipe.send({ ...request, n })
    })
  }

  /**
   * Registers `listener`, called once with why when the host exits (at once if it has). Returns how to unregister it.
   */
  onExit(listener: (why: string) => void): () => void {
    if (this.#gone !== undefined) {
      listener(this.#gone)
      return () => {}
    }
    this.#exitListeners.add(listener)
    return () => {
      this.#exitListeners.delete(listener)
    }
  }

  /** Kills the host at once (SIGKILL); requests in flight reject. */
  kill(why = 'killed by the runner'): void {
    this.#onExit(why)
    this.#child.kill('SIGKILL')
  }

  /**
   * Ends its pipe (the host disposes its isolates and exits); SIGKILL after `graceMs`. Resolves once it exited.
   * Idempotent.
   */
  async close(graceMs = 5000): Promise<void> {
    this.#closing = true
    this.#pipe.end()
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const timer = setTimeout(() => {
        this.#child.kill('SIGKILL')
      }, graceMs)
      await this.#exited
      clearTimeout(timer)
    }
    this.#onExit('closed')
  }

  #onFrame(frame: FromHost): void {
    switch (frame.op) {
      case 'reply': {
        const p = this.#pending.get(frame.n)
        if (p === undefined) return
        this.#pending.delete(frame.n)
        p.resolve(frame)
        return
      }
      case 'ready':
        this.#ready?.resolve(frame)
        return
      case 'fatal':
        this.#ready?.reject(new Error(frame.message))
        return
      case 'log':
        this.#log[frame.level]({ pid: this.pid }, frame.message)
    }
  }

  #onExit(why: string): void {
    if (this.#gone !== undefined) return
    const stderr = this.#stderr.trim()
    this.#gone = stderr !== '' && !this.#closing ? `${why}; stderr: ${stderr.slice(-1000)}` : why
    if (!this.#closing) this.#log.warn({ pid: this.pid, why: this.#gone }, 'pyodide host process exited')
    this.#ready?.reject(new Error(`the pyodide host exited before it was ready (${this.#gone})`))
    this.#pipe.end()
    const pending = [...this.#pending.values()]
    this.#pending.clear()
    for (const p of pending)
      p.reject(
        hostError(`the pyodide host process (pid ${String(this.pid)}) exited (${this.#gone}) while the request ran`)
      )
    const listeners = [...this.#exitListeners]
    this.#exitListeners.clear()
    for (const l of listeners) l(this.#gone)
  }
}
