/**
 * Stateful sessions on one runner: one `session_host.py` process forks a session process per
 * session (copy-on-write from the warm host, so an idle session costs only its private pages),
 * and each session forks before every cell (sandbox-images/python/session_host.py). A cell that
 * passes its timeout is killed and the session keeps the state it had before that cell.
 *
 * A session whose process died answers {@link SessionError} `SF_ERR_SESSION_LOST` (HTTP 410),
 * never a fresh state; an unknown, closed or expired one `SF_ERR_SESSION_NOT_FOUND` (404).
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { createInterface } from 'node:readline'
import {
  encodeSessionId, GRACES, timeoutMsOf, SESSION_LIMITS, SESSION_LOST, SESSION_NOT_FOUND,
  type ExecResult, type RunnerSessionsApi, type SessionCreateRequest, type SessionExecRequest, type SessionInfo
} from '@sandfleet/protocol'
import { RegisteredError, type ErrorRegistry } from '@sandfleet/protocol/http'
import type { ExecutorCommand } from '../backends/contract.ts'
import { SHIPPED_SESSION_HOST } from '../kits/executor/python-image.ts'
import { killGroup, spawnCommand } from '../kits/executor/spawn.ts'
import { fetchErrorsOf } from '../kits/executor/executor-channel.ts'

/** Session error codes, their HTTP status, protocol status and meaning (docs/errors.md). */
export const SESSION_ERRORS = Object.freeze({
  [SESSION_LOST]: { statusCode: 410, status: 'invalid_request', message: 'The session\'s process or sandbox died; its state is gone. Open a new session.' },
  [SESSION_NOT_FOUND]: { statusCode: 404, status: 'invalid_request', message: 'No such session on this runner (never opened, closed or expired)' },
  SF_ERR_SESSION_LIMIT: { statusCode: 429, status: 'overloaded', message: 'The runner, or the caller\'s key, holds its maximum of sessions' },
  SF_ERR_SESSION_HOST: { statusCode: 503, status: 'infra_error', message: 'The session host process could not start or died' },
  SF_ERR_SESSION_BUSY: { statusCode: 409, status: 'invalid_request', message: 'The session is running another cell; send cells one at a time' },
  SF_ERR_SESSION_DISABLED: { statusCode: 501, status: 'invalid_request', message: 'Sessions are not enabled here (maxSessions is 0, or the backend cannot hold them)' }
} satisfies ErrorRegistry)

/** A session error code. */
export type SessionErrorCode = keyof typeof SESSION_ERRORS

/** An error of the session API; `statusCode` is what the caller sees, `toBody()` its ErrorBody. */
export class SessionError extends RegisteredError<SessionErrorCode> {
  constructor (code: SessionErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(SESSION_ERRORS, code, message, options)
    this.name = 'SessionError'
  }
}

/** The program that runs `session_host.py` for a socket directory. */
export type SessionHostCommand = (socketDir: string) => ExecutorCommand

/** The default {@link SessionHostCommand}: no sandbox (tests, the unsafe backend). */
export const unsandboxedSessionHost: SessionHostCommand = (socketDir) => ({ file: 'python3', args: [SHIPPED_SESSION_HOST, socketDir], env: process.env })

/** Options of a {@link SessionHost}. */
export interface SessionHostOptions {
  /** The runner's id, encoded in every session id. */
  runnerId: string
  /** Most sessions held at once (default 1000). */
  maxSessions?: number
  /** Most sessions per API key (default 100). */
  maxSessionsPerKey?: number
  /**
   * How to start the host for a socket directory (the host makes one Unix socket per session
   * there). Default: `python3 session_host.py DIR` on the host itself, without a sandbox; a
   * driver gives its sandboxed launcher (the process driver runs it under bubblewrap).
   */
  command?: SessionHostCommand
  /** How often idle sessions are swept, in ms (default 1000). */
  sweepMs?: number
  /** Output cap per stream, in bytes (default 1 MiB). */
  maxOutputBytes?: number
  /** Beyond a cell's `timeout_ms`, how long the host may take to answer before the session is counted lost (the runner's `graceMs`; default `GRACES.sandboxMs`). */
  graceMs?: number
}

interface Held {
  info: SessionInfo
  key: string
  socket: Socket
  /** The process to kill to end the session: its namespace's init when isolated, else the one holding it now. */
  pid: number
  /** Whether the session has its own user, mount, pid, IPC and network namespaces. */
  isolated: boolean
  pending: ((frame: any) => void) | undefined
  busy: boolean
  lost: boolean
}

/** Lost session ids remembered (answered 410) at most; a long-lived runner must not grow without end. */
export const LOST_REMEMBERED = 10_000

/** Calls `onLine` with each newline-terminated line of `socket` (one frame each), without readline's overhead. */
function onLines (socket: Socket, onLine: (line: string) => void): void {
  let pending = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    let start = 0
    let nl = chunk.indexOf('\n')
    while (nl !== -1) {
      const line = pending + chunk.slice(start, nl)
      pending = ''
      onLine(line)
      start = nl + 1
      nl = chunk.indexOf('\n', start)
    }
    pending += chunk.slice(start)
  })
}

/** The sessions of one runner; see the module comment. */
export class SessionHost implements RunnerSessionsApi {
  readonly #opts: Required<SessionHostOptions>
  readonly #sessions = new Map<string, Held>()
  readonly #lost = new Set<string>()
  readonly #opening = new Map<string, (frame: any) => void>()
  readonly #dir: string
  #host: ChildProcess | undefined
  #ready: Promise<void> | undefined
  #sweeper: NodeJS.Timeout | undefined
  #closed = false

  constructor (options: SessionHostOptions) {
    this.#opts = {
      maxSessions: 1000, maxSessionsPerKey: 100, command: unsandboxedSessionHost, sweepMs: 1000, maxOutputBytes: 1 << 20, graceMs: GRACES.sandboxMs, ...options
    }
    this.#dir = mkdtempSync(join(tmpdir(), 'sf-sessions-'))
    // As root, a sandboxed host runs as uid 65534 and makes its sockets here.
    if (process.getuid?.() === 0) chownSync(this.#dir, 65534, 65534)
  }

  /** Sessions held now. */
  get size (): number {
    return this.#sessions.size
  }

  /** Starts the host process (once). */
  start (): Promise<void> {
    this.#ready ??= new Promise((resolve, reject) => {
      const host = spawnCommand(this.#opts.command(this.#dir), 'inherit')
      this.#host = host
      host.stdin?.on('error', () => {})
      host.stdout?.on('error', () => {})
      host.on('error', (err) => reject(new SessionError('SF_ERR_SESSION_HOST', `session host did not start: ${err.message}`, { cause: err })))
      host.on('exit', (code, signal) => {
        this.#host = undefined
        this.#ready = undefined
        reject(new SessionError('SF_ERR_SESSION_HOST', `session host exited (${signal ?? `code ${String(code)}`}) before it was ready`))
        for (const answer of this.#opening.values()) answer(undefined)
      })
      createInterface({ input: host.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const frame = JSON.parse(line) as { op: string, sid?: string }
        if (frame.op === 'ready') resolve()
        else if (frame.op === 'opened' && frame.sid !== undefined) this.#opening.get(frame.sid)?.(frame)
      })
      this.#sweeper = setInterval(() => this.#sweep(), this.#opts.sweepMs).unref()
    })
    return this.#ready
  }

  /** Opens a session for `key` (the caller's API key, '' when none). */
  async create (req: SessionCreateRequest = {}, key = ''): Promise<SessionInfo> {
    if ((req.language ?? 'python') !== 'python') throw new SessionError('SF_ERR_SESSION_HOST', 'sessions run Python only')
    if (this.#sessions.size >= this.#opts.maxSessions) throw new SessionError('SF_ERR_SESSION_LIMIT', `this runner holds its maximum of ${this.#opts.maxSessions} sessions`)
    let mine = 0
    for (const s of this.#sessions.values()) if (s.key === key) mine++
    if (mine >= this.#opts.maxSessionsPerKey) throw new SessionError('SF_ERR_SESSION_LIMIT', `this key holds its maximum of ${this.#opts.maxSessionsPerKey} sessions`)
    await this.start()
    const nonce = randomBytes(12).toString('hex')
    const opened = await new Promise<{ pid: number, socket: string, isolated?: boolean, error?: string } | undefined>((resolve) => {
      this.#opening.set(nonce, resolve)
      this.#host?.stdin?.write(JSON.stringify({ op: 'open', sid: nonce }) + '\n')
    }).finally(() => this.#opening.delete(nonce))
    if (opened === undefined) throw new SessionError('SF_ERR_SESSION_HOST', 'the session host died while opening the session')
    if (opened.error !== undefined) throw new SessionError('SF_ERR_SESSION_HOST', `the session could not be opened: ${opened.error}`)
    // The host names the socket by its own path (inside its sandbox); it lives in our directory.
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect(join(this.#dir, basename(opened.socket)), () => resolve(s))
      s.once('error', reject)
    })
    const now = new Date()
    const ttl = req.ttl_s ?? SESSION_LIMITS.defaultTtlS
    const id = encodeSessionId(this.#opts.runnerId, nonce)
    const held: Held = {
      info: {
        session_id: id, language: 'python', runner: this.#opts.runnerId, ttl_s: ttl, memory_mb: req.memory_mb ?? SESSION_LIMITS.defaultMemoryMb,
        created_at: now.toISOString(), last_used_at: now.toISOString(), expires_at: new Date(now.getTime() + ttl * 1000).toISOString(), cells: 0
      },
      key, socket, pid: opened.pid, isolated: opened.isolated === true, pending: undefined, busy: false, lost: false
    }
    onLines(socket, (line) => { const p = held.pending; held.pending = undefined; p?.(JSON.parse(line)) })
    socket.on('close', () => {
      if (this.#sessions.get(id) === held) { held.lost = true; this.#remember(id); this.#sessions.delete(id) }
      const p = held.pending; held.pending = undefined; p?.(undefined)
    })
    socket.on('error', () => {})
    this.#sessions.set(id, held)
    return { ...held.info }
  }

  /**
   * The session's info; throws not-found or lost. With `key`, a session opened under another
   * key is not found either (ids are not bearer tokens across keys).
   */
  get (id: string, key?: string): SessionInfo {
    return { ...this.#held(id, key).info }
  }

  /** Runs one cell in the session's state. Resolves with a result for every outcome of the code. */
  async execute (id: string, req: SessionExecRequest, key?: string): Promise<ExecResult> {
    const held = this.#held(id, key)
    if (held.busy) throw new SessionError('SF_ERR_SESSION_BUSY', `session ${id} is running another cell`)
    held.busy = true
    const timeoutMs = timeoutMsOf(req)
    try {
      const frame = await new Promise<any>((resolve) => {
        held.pending = resolve
        const timer = setTimeout(() => { held.socket.destroy() }, timeoutMs + this.#opts.graceMs)
        const done = held.pending
        held.pending = (f) => { clearTimeout(timer); done(f) }
        held.socket.write(JSON.stringify({
          op: 'exec', id: req.request_id ?? '', code: req.code, stdin: req.stdin ?? '', timeout_ms: timeoutMs, memory_mb: held.info.memory_mb,
          files: req.files ?? {}, fetch_files: req.fetch_files ?? [], max_output_bytes: this.#opts.maxOutputBytes
        }) + '\n')
      })
      if (frame === undefined) throw new SessionError(SESSION_LOST, `session ${id} lost: its process died`)
      if (typeof frame.pid === 'number') held.pid = frame.pid
      const now = new Date()
      held.info.cells++
      held.info.last_used_at = now.toISOString()
      held.info.expires_at = new Date(now.getTime() + held.info.ttl_s * 1000).toISOString()
      const result: ExecResult = {
        status: frame.status, stdout: frame.stdout, stderr: frame.stderr, exit_code: frame.exit_code, duration_ms: frame.duration_ms, queue_ms: 0,
        truncated: frame.truncated, error: frame.error, files: frame.files ?? {}, runner: this.#opts.runnerId, sandbox: `session-${held.pid}`, display: frame.display ?? []
      }
      const fetchErrors = fetchErrorsOf(frame)
      if (fetchErrors !== undefined) result.fetch_errors = fetchErrors
      if (req.request_id !== undefined) result.request_id = req.request_id
      return result
    } finally {
      held.busy = false
    }
  }

  /** Closes a session (not-found when it is not held). */
  async close (id: string, key?: string): Promise<void> {
    const held = this.#held(id, key)
    this.#sessions.delete(id)
    this.#kill(held)
  }

  /** Closes every session and the host. Idempotent. */
  async shutdown (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#sweeper)
    for (const held of this.#sessions.values()) this.#kill(held)
    this.#sessions.clear()
    this.#host?.stdin?.end(JSON.stringify({ op: 'shutdown' }) + '\n')
    if (this.#host !== undefined) killGroup(this.#host)
    rmSync(this.#dir, { recursive: true, force: true })
  }

  /** Whether a session has namespaces of its own (its processes and files hidden from the other sessions). */
  isolatedOf (id: string): boolean {
    return this.#held(id).isolated
  }

  /** Test hook: kills the process holding a session, as a crash would (its id then answers lost). */
  async crash (id: string): Promise<void> {
    const held = this.#held(id)
    const closed = new Promise((resolve) => held.socket.once('close', resolve))
    this.#host?.stdin?.write(JSON.stringify({ op: 'kill', pid: held.pid }) + '\n')
    await closed
  }

  #held (id: string, key?: string): Held {
    const held = this.#sessions.get(id)
    if (held !== undefined && (key === undefined || key === held.key)) return held
    if (this.#lost.has(id)) throw new SessionError(SESSION_LOST, `session ${id} lost: its process died`)
    throw new SessionError(SESSION_NOT_FOUND, `no session ${id} on this runner (closed, expired or never opened)`)
  }

  /** Remembers a lost session, so its id answers 410; the oldest of more than {@link LOST_REMEMBERED} are forgotten (404). */
  #remember (id: string): void {
    this.#lost.add(id)
    if (this.#lost.size > LOST_REMEMBERED) this.#lost.delete(this.#lost.values().next().value as string)
  }

  #kill (held: Held): void {
    held.socket.end(JSON.stringify({ op: 'close' }) + '\n')
    held.socket.destroy()
    // The pid is in the host's pid namespace (its sandbox): the host kills it.
    this.#host?.stdin?.write(JSON.stringify({ op: 'kill', pid: held.pid }) + '\n')
  }

  #sweep (): void {
    const now = Date.now()
    for (const [id, held] of this.#sessions) {
      if (!held.busy && Date.parse(held.info.expires_at) <= now) {
        this.#sessions.delete(id)
        this.#kill(held)
      }
    }
  }
}
