/**
 * Stateful sessions on one runner: one `session_host.py` process forks a session process per
 * session (copy-on-write from the warm host, so an idle session costs only its private pages),
 * and each session forks before every cell (sandbox-images/python/session_host.py). A cell that
 * passes its timeout is killed and the session keeps the state it had before that cell.
 *
 * A cell takes the path of a call: prepared by `prepareCall` (the runner's limits, then the
 * contract's defaults; a cell over a limit is refused with the runner's 400 error), run through
 * an {@link ExecutorChannel} on the session's socket (the executor's frames), under a
 * {@link JobDeadline} (`timeout_ms` + the soft stop + the runner's `graceMs`: a session that has
 * not answered by then is cut off, and counted lost), its result built by `outcomeResult`.
 *
 * A session whose process died answers {@link SessionError} `SF_ERR_SESSION_LOST` (HTTP 410,
 * status `infra_error`: the fleet's fault), never a fresh state; an unknown, closed or expired one
 * `SF_ERR_SESSION_NOT_FOUND` (404).
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { createInterface } from 'node:readline'
import {
  encodeSessionId,
  NO_CALL_CONTEXT,
  SESSION_LIMITS,
  SESSION_LOST,
  SESSION_NOT_FOUND,
  type CallContext,
  type ExecResult,
  type RunnerSessionsApi,
  type SessionCreateRequest,
  type SessionExecRequest,
  type SessionInfo
} from '@sandfleet/protocol'
import type { ExecutorCommand } from '../sandbox/contract.ts'
import { runnerConfig, type RunnerConfig } from '../config.ts'
import { RunnerError, SessionError } from '../errors.ts'
import { SHIPPED_SESSION_HOST } from '../kits/executor/python-image.ts'
import { killGroup, spawnCommand } from '../kits/executor/spawn.ts'
import { EXECUTOR_SOFT_STOP_MS, ExecutorChannel, type OutputListener } from '../kits/executor/executor-channel.ts'
import { sandboxEnv } from '../kits/executor/sandbox-env.ts'
import type { FreezeWatch } from '../pool/freeze-watch.ts'
import { JobDeadline } from '../pool/job-deadline.ts'
import { frozenTimeoutMessage, outcomeResult, stalledResult } from '../pool/job-results.ts'
import { prepareCall } from '../requests/prepared-call.ts'
import { AgentChannel } from './session-agent.ts'

/** The program that runs `session_host.py` for a socket directory. */
export type SessionHostCommand = (socketDir: string) => ExecutorCommand

/** The default {@link SessionHostCommand}: no sandbox (tests, the unsafe backend). */
export const unsandboxedSessionHost: SessionHostCommand = (socketDir) => ({
  file: 'python3',
  args: [SHIPPED_SESSION_HOST, socketDir],
  env: { ...process.env, ...sandboxEnv({}) }
})

/** Options of a {@link SessionHost}. */
export interface SessionHostOptions {
  /** The runner's id, encoded in every session id. */
  runnerId: string
  /**
   * The runner's configuration (default: its defaults): `maxSessions`, `maxSessionsPerKey`, the
   * limits a cell is checked against, `maxOutputBytes` and `graceMs`.
   */
  config?: RunnerConfig
  /**
   * How to start the host for a socket directory (the host makes one Unix socket per session
   * there). Default: `python3 session_host.py DIR` on the host itself, without a sandbox; a
   * driver gives its sandboxed launcher (the process driver runs it under bubblewrap).
   */
  command?: SessionHostCommand
  /** How often idle sessions are swept, in ms (default 1000). */
  sweepMs?: number
  /**
   * The runner's clock watch: a cell answered `timeout` across a freeze of the runner is answered `infra_error`
   * (stalled), as a job is; the session keeps the state it had before the cell.
   */
  freezes?: FreezeWatch
}

/** The session host's answer to `open`: the session's process and socket, or why it could not. */
interface Opened {
  pid: number
  socket: string
  /** The socket of the session's agent (files, processes), when it was opened with one. */
  agent_socket?: string
  isolated?: boolean
  error?: string
}

/**
 * How a sandbox's session is opened (sessions/session-sandboxes.ts): with an agent (its files and processes), `env` in
 * its environment, `home` its working directory where the session has it as a private place, and an end fixed at
 * `endAt` (not moved by its use; it is killed then, running or not).
 */
export interface SandboxOpen {
  env: Record<string, string>
  home: string
  endAt: Date
}

/**
 * A cell's options (a sandbox's run): the code context it runs in (`context`: a key of the session's own, made fresh
 * the first time; `forget`: keys dropped first), `cwd` of a new context, `env` for this cell only, and `main_key`,
 * the display key that marks the display of the cell's value.
 */
export interface CellOptions {
  context?: string
  cwd?: string
  forget?: string[]
  env?: Record<string, string>
  main_key?: string
}

interface Held {
  info: SessionInfo
  key: string
  socket: Socket
  /** The executor's frames over the session's socket. */
  channel: ExecutorChannel
  /** The process to kill to end the session: its namespace's init when isolated, else the one holding it now. */
  pid: number
  /** Whether the session has its own user, mount, pid, IPC and network namespaces. */
  isolated: boolean
  busy: boolean
  /** A sandbox's session: its agent, and its end is fixed (see {@link SandboxOpen}). */
  agent?: AgentChannel
}

/** A cell's options as the session reads them (frames.py's `cell`): every field, null where it has none. */
function cellFrame(cell: CellOptions, stream: boolean): object {
  return {
    op: 'cell',
    context: cell.context ?? null,
    cwd: cell.cwd ?? null,
    forget: cell.forget ?? [],
    env: cell.env ?? {},
    main_key: cell.main_key ?? null,
    stream
  }
}

/** A session that has not answered by its cell's hard deadline is cut off (it is then lost). */
const cutOff = (held: Held): void => {
  held.socket.destroy()
}

/** The languages a cell is checked against: none (sessions run Python, said at create). */
const ANY_LANGUAGE = new Map()

/** Lost session ids remembered (answered 410) at most; a long-lived runner must not grow without end. */
export const LOST_REMEMBERED = 10_000

/** The sessions of one runner; see the module comment. */
export class SessionHost implements RunnerSessionsApi {
  readonly #opts: Required<Omit<SessionHostOptions, 'freezes'>> & Pick<SessionHostOptions, 'freezes'>
  /** Past a cell's `timeout_ms`, when its hard deadline falls: the session's soft stop and the grace. */
  readonly #overrunMs: number
  readonly #sessions = new Map<string, Held>()
  readonly #lost = new Set<string>()
  readonly #opening = new Map<string, (frame: Opened | undefined) => void>()
  readonly #ended = new Set<(id: string) => void>()
  readonly #dir: string
  #host: ChildProcess | undefined
  #ready: Promise<void> | undefined
  #sweeper: NodeJS.Timeout | undefined
  #closed = false

  constructor(options: SessionHostOptions) {
    this.#opts = { config: runnerConfig({}), command: unsandboxedSessionHost, sweepMs: 1000, ...options }
    this.#overrunMs = EXECUTOR_SOFT_STOP_MS + this.#opts.config.graceMs
    this.#dir = mkdtempSync(join(tmpdir(), 'sf-sessions-'))
    // As root, a sandboxed host runs as uid 65534 and makes its sockets here.
    if (process.getuid?.() === 0) chownSync(this.#dir, 65534, 65534)
  }

  /** Sessions held now. */
  get size(): number {
    return this.#sessions.size
  }

  /** Starts the host process (once). */
  start(): Promise<void> {
    this.#ready ??= new Promise((resolve, reject) => {
      const host = spawnCommand(this.#opts.command(this.#dir), 'inherit')
      this.#host = host
      host.stdin?.on('error', () => {})
      host.stdout?.on('error', () => {})
      host.on('error', (err) =>
        reject(new SessionError('SF_ERR_SESSION_HOST', `session host did not start: ${err.message}`, { cause: err }))
      )
      host.on('exit', (code, signal) => {
        this.#host = undefined
        this.#ready = undefined
        reject(
          new SessionError(
            'SF_ERR_SESSION_HOST',
            `session host exited (${signal ?? `code ${String(code)}`}) before it was ready`
          )
        )
        for (const answer of this.#opening.values()) answer(undefined)
      })
      createInterface({ input: host.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const frame = JSON.parse(line) as { op: string; sid?: string } & Partial<Opened>
        if (frame.op === 'ready') resolve()
        else if (frame.op === 'opened' && frame.sid !== undefined) this.#opening.get(frame.sid)?.(frame as Opened)
      })
      this.#sweeper = setInterval(() => this.#sweep(), this.#opts.sweepMs).unref()
    })
    return this.#ready
  }

  /**
   * Opens a session for `key` (the caller's API key, '' when none); with `sandbox`, a sandbox's session (see
   * {@link SandboxOpen}).
   */
  async create(req: SessionCreateRequest = {}, key = '', sandbox?: SandboxOpen): Promise<SessionInfo> {
    if ((req.language ?? 'python') !== 'python')
      throw new SessionError('SF_ERR_SESSION_HOST', 'sessions run Python only')
    const { maxSessions, maxSessionsPerKey } = this.#opts.config
    if (this.#sessions.size >= maxSessions)
      throw new SessionError('SF_ERR_SESSION_LIMIT', `this runner holds its maximum of ${maxSessions} sessions`)
    let mine = 0
    for (const s of this.#sessions.values()) if (s.key === key) mine++
    if (mine >= maxSessionsPerKey)
      throw new SessionError('SF_ERR_SESSION_LIMIT', `this key holds its maximum of ${maxSessionsPerKey} sessions`)
    await this.start()
    const nonce = randomBytes(12).toString('hex')
    const memoryMb = req.memory_mb ?? SESSION_LIMITS.defaultMemoryMb
    const open =
      sandbox === undefined
        ? { op: 'open', sid: nonce, memory_mb: memoryMb }
        : { op: 'open', sid: nonce, agent: true, env: sandbox.env, home: sandbox.home, memory_mb: memoryMb }
    const opened = await new Promise<Opened | undefined>((resolve) => {
      this.#opening.set(nonce, resolve)
      this.#host?.stdin?.write(JSON.stringify(open) + '\n')
    }).finally(() => this.#opening.delete(nonce))
    if (opened === undefined)
      throw new SessionError('SF_ERR_SESSION_HOST', 'the session host died while opening the session')
    if (opened.error !== undefined)
      throw new SessionError('SF_ERR_SESSION_HOST', `the session could not be opened: ${opened.error}`)
    // The host names the socket by its own path (inside its sandbox); it lives in our directory.
    const socket = await this.#connect(opened.socket)
    const agentSocket = opened.agent_socket === undefined ? undefined : await this.#connect(opened.agent_socket)
    const now = new Date()
    const ttl = req.ttl_s ?? SESSION_LIMITS.defaultTtlS
    const id = encodeSessionId(this.#opts.runnerId, nonce)
    const held: Held = {
      info: {
        session_id: id,
        language: 'python',
        runner: this.#opts.runnerId,
        ttl_s: ttl,
        memory_mb: memoryMb,
        created_at: now.toISOString(),
        last_used_at: now.toISOString(),
        expires_at: (sandbox?.endAt ?? new Date(now.getTime() + ttl * 1000)).toISOString(),
        cells: 0
      },
      key,
      socket,
      channel: new ExecutorChannel(socket, socket),
      pid: opened.pid,
      isolated: opened.isolated === true,
      busy: false,
      ...(agentSocket === undefined ? {} : { agent: new AgentChannel(agentSocket) })
    }
    socket.on('close', () => {
      if (this.#sessions.get(id) === held) {
        this.#remember(id)
        this.#sessions.delete(id)
        this.#end(id, held)
      }
    })
    socket.on('error', () => {})
    this.#sessions.set(id, held)
    return { ...held.info }
  }

  /**
   * The session's info; throws not-found or lost. With `key`, a session opened under another
   * key is not found either (ids are not bearer tokens across keys).
   */
  get(id: string, key?: string): SessionInfo {
    return { ...this.#held(id, key).info }
  }

  /**
   * Runs one cell in the session's state. Resolves with a result for every outcome of the code;
   * throws the runner's 400 for a cell over its limits, and a {@link SessionError} otherwise.
   */
  async execute(
    id: string,
    req: SessionExecRequest,
    key?: string,
    context: CallContext = NO_CALL_CONTEXT
  ): Promise<ExecResult> {
    return await this.#execute(id, req, key, context)
  }

  /**
   * Runs one cell of a sandbox's session (its caller checked already) with its options (see {@link CellOptions}).
   * With `output`, the cell streams: `output` takes its stdout and stderr as the session reads them (within the cap,
   * in chunks), before it resolves; an exception's traceback is then its error alone, not in its stderr.
   */
  async executeCell(
    id: string,
    req: SessionExecRequest,
    cell: CellOptions,
    context: CallContext = NO_CALL_CONTEXT,
    output?: OutputListener
  ): Promise<ExecResult> {
    return await this.#execute(id, req, undefined, context, cell, output)
  }

  async #execute(
    id: string,
    req: SessionExecRequest,
    key: string | undefined,
    context: CallContext,
    cell?: CellOptions,
    output?: OutputListener
  ): Promise<ExecResult> {
    const call = prepareCall({ ...req, language: 'python' }, context, this.#opts.config, ANY_LANGUAGE)
    if (call.job === undefined)
      throw new RunnerError(call.problem.code, call.problem.message, { field: call.problem.field })
    const held = this.#held(id, key)
    if (held.busy) throw new SessionError('SF_ERR_SESSION_BUSY', `session ${id} is running another cell`)
    // Its socket ended (the session's process died), its close not yet seen: lost all the same.
    if (held.channel.closed) throw new SessionError(SESSION_LOST, `session ${id} lost: its process died`)
    held.busy = true
    try {
      const job = { ...call.job, request: { ...call.job.request, memory_mb: held.info.memory_mb } }
      const deadline = new JobDeadline(held, job, this.#overrunMs, cutOff)
      // the cell's options go just before its frame (session.py reads them first)
      if (cell !== undefined) held.socket.write(JSON.stringify(cellFrame(cell, output !== undefined)) + '\n')
      const outcome = await held.channel.run(job, deadline, output)
      if (!deadline.answer() || (outcome.status === 'killed' && held.channel.closed))
        throw new SessionError(SESSION_LOST, `session ${id} lost: its process died`)
      if (outcome.pid !== undefined) held.pid = outcome.pid
      const now = new Date()
      held.info.cells++
      held.info.last_used_at = now.toISOString()
      if (held.agent === undefined)
        held.info.expires_at = new Date(now.getTime() + held.info.ttl_s * 1000).toISOString()
      const sandbox = `session-${held.pid}`
      const frozenMs = outcome.status === 'timeout' ? (this.#opts.freezes?.frozenSince(deadline.handedAt) ?? 0) : 0
      if (frozenMs > 0)
        return stalledResult(this.#opts.runnerId, call.requestId, sandbox, 0, frozenTimeoutMessage(frozenMs))
      const result = outcomeResult(this.#opts.runnerId, call.requestId, sandbox, 0, outcome)
      result.display = outcome.display ?? []
      return result
    } finally {
      held.busy = false
    }
  }

  /** Closes a session (not-found when it is not held). */
  async close(id: string, key?: string): Promise<void> {
    const held = this.#held(id, key)
    this.#sessions.delete(id)
    this.#kill(held)
    this.#end(id, held)
  }

  /** The info of every session `key` holds. */
  list(key: string): SessionInfo[] {
    return [...this.#sessions.values()].filter((held) => held.key === key).map((held) => ({ ...held.info }))
  }

  /** The agent of a sandbox's session (its files and processes); throws not-found or lost. */
  agentOf(id: string): AgentChannel {
    const agent = this.#held(id).agent
    if (agent === undefined) throw new SessionError(SESSION_NOT_FOUND, `session ${id} is not a sandbox`)
    if (agent.closed) throw new SessionError(SESSION_LOST, `session ${id} lost: its processes died`)
    return agent
  }

  /** Moves a sandbox's fixed end to `at` (it is killed then, running or not). */
  setEnd(id: string, at: Date): SessionInfo {
    const held = this.#held(id)
    held.info.expires_at = at.toISOString()
    return { ...held.info }
  }

  /** Calls `listener` with the id of each session that ends: closed, expired or lost. */
  onEnd(listener: (id: string) => void): void {
    this.#ended.add(listener)
  }

  /** Closes every session and the host. Idempotent. */
  async shutdown(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#sweeper)
    for (const [id, held] of this.#sessions) {
      this.#kill(held)
      this.#end(id, held)
    }
    this.#sessions.clear()
    this.#host?.stdin?.end(JSON.stringify({ op: 'shutdown' }) + '\n')
    if (this.#host !== undefined) killGroup(this.#host)
    rmSync(this.#dir, { recursive: true, force: true })
  }

  /** Whether a session has namespaces of its own (its processes and files hidden from the other sessions). */
  isolatedOf(id: string): boolean {
    return this.#held(id).isolated
  }

  /** Test hook: kills the process holding a session, as a crash would (its id then answers lost). */
  async crash(id: string): Promise<void> {
    const held = this.#held(id)
    const closed = new Promise((resolve) => held.socket.once('close', resolve))
    this.#host?.stdin?.write(JSON.stringify({ op: 'kill', pid: held.pid }) + '\n')
    await closed
  }

  #held(id: string, key?: string): Held {
    const held = this.#sessions.get(id)
    if (held !== undefined && (key === undefined || key === held.key)) return held
    if (this.#lost.has(id)) throw new SessionError(SESSION_LOST, `session ${id} lost: its process died`)
    throw new SessionError(SESSION_NOT_FOUND, `no session ${id} on this runner (closed, expired or never opened)`)
  }

  /**
   * Remembers a lost session, so its id answers 410; the oldest of more than {@link LOST_REMEMBERED} are forgotten
   * (404).
   */
  #remember(id: string): void {
    this.#lost.add(id)
    if (this.#lost.size > LOST_REMEMBERED) this.#lost.delete(this.#lost.values().next().value as string)
  }

  #end(id: string, held: Held): void {
    held.agent?.close()
    for (const listener of this.#ended) listener(id)
  }

  async #connect(path: string): Promise<Socket> {
    return await new Promise<Socket>((resolve, reject) => {
      const s = connect(join(this.#dir, basename(path)), () => resolve(s))
      s.once('error', reject)
    })
  }

  #kill(held: Held): void {
    held.socket.end(JSON.stringify({ op: 'close' }) + '\n')
    held.socket.destroy()
    // The pid is in the host's pid namespace (its sandbox): the host kills it.
    this.#host?.stdin?.write(JSON.stringify({ op: 'kill', pid: held.pid }) + '\n')
  }

  #sweep(): void {
    const now = Date.now()
    for (const [id, held] of this.#sessions) {
      // a sandbox ends at its end, running or not; a session once idle past its time
      if ((!held.busy || held.agent !== undefined) && Date.parse(held.info.expires_at) <= now) {
        this.#sessions.delete(id)
        this.#kill(held)
        this.#end(id, held)
      }
    }
  }
}
