/**
 * A runner's sandboxes (the protocol's {@link RunnerSandboxesApi}): each one a session of the {@link SessionHost},
 * opened with an agent (its files and processes, agent.py), `/home/user` as its home, and an end fixed in time. This
 * file keeps what a sandbox adds to its session: its access token (a digest compared in constant time), its template
 * and labels, its code contexts, and one run at a time (runs wait their turn, as a kernel's do).
 *
 * Code contexts: a Python context is a globals dict of the session's own (session.py), keyed `ID.GENERATION`; a
 * restart moves it to a fresh generation and the old dict is dropped with the next cell. A JavaScript context is an
 * isolate's context in the runner (`js-contexts.ts`), with no file system or process of the sandbox's.
 *
 * Who may call: the key that made the sandbox (its API key's digest), or whoever presents its token; code contexts
 * also with no token at all (E2B's SDK sends none there). Any other caller is told the sandbox is not found.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import {
  AGENT_OPS,
  callContext,
  NO_CALL_CONTEXT,
  SANDBOX_TOKEN,
  SESSION_LIMITS,
  SESSION_NOT_FOUND,
  TOKENLESS_OPS,
  type CallContext,
  type ContextLanguage,
  type RunnerSandboxesApi,
  type SandboxAnswer,
  type SandboxAuth,
  type SandboxCall,
  type SandboxCalls,
  type SandboxContext,
  type SandboxCreateRequest,
  type SandboxDisplay,
  type SandboxEvent,
  type SandboxInfo,
  type SandboxOp,
  type SandboxRun,
  type SandboxRunEvent,
  type SandboxStreamCall,
  type SandboxStreamEvent,
  type SessionInfo
} from '@sandfleet/protocol'
import { SandboxError, SessionError } from '../errors.ts'
import { JsContexts } from './js-contexts.ts'
import type { SessionHost } from './session-host.ts'

/** A streamed run's events, as {@link SessionSandboxes} makes them. */
type RunEvents = (event: SandboxRunEvent) => void

/** A sandbox's home: its working directory and HOME, a private place of its session's (where the sandbox has it). */
export const SANDBOX_HOME = '/home/user'

/** The display key session.py marks the display of a run's value with (never one a value has of its own). */
const MAIN_KEY = 'application/x-sandfleet-main-result'

interface Context extends SandboxContext {
  /** A Python context's key in the session: `ID.GENERATION`. */
  key: string
  generation: number
  runs: number
}

/** What a sandbox adds to its session. */
interface Sandbox {
  id: string
  key: string
  token: string
  digest: Buffer
  template: string
  labels: Record<string, string>
  startedAt: string
  contexts: Map<string, Context>
  /** The default context of each language, once it has one. */
  defaults: Partial<Record<ContextLanguage, string>>
  /** Python context keys to drop with the next cell. */
  forget: string[]
  /** The end of the run before (runs go one at a time). */
  turn: Promise<unknown>
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest()

/** Options of {@link SessionSandboxes}. */
export interface SessionSandboxesOptions {
  /** The runner's id, in each sandbox's info. */
  runnerId: string
  /** The longest run (ms) when a run names none: the runner's `maxTimeoutMs`. */
  maxTimeoutMs: number
}

/** The sandboxes of one runner's session host; see the module comment. */
export class SessionSandboxes implements RunnerSandboxesApi {
  readonly #host: SessionHost
  readonly #opts: SessionSandboxesOptions
  readonly #sandboxes = new Map<string, Sandbox>()
  readonly #js = new JsContexts()

  constructor(host: SessionHost, options: SessionSandboxesOptions) {
    this.#host = host
    this.#opts = options
    host.onEnd((id) => {
      const sandbox = this.#sandboxes.get(id)
      if (sandbox === undefined) return
      this.#sandboxes.delete(id)
      for (const context of sandbox.contexts.values()) if (context.language === 'javascript') this.#js.drop(context.key)
    })
  }

  /** Sandboxes held now. */
  get size(): number {
    return this.#sandboxes.size
  }

  async create(request: SandboxCreateRequest, key: string): Promise<SandboxInfo> {
    const endAt = new Date(Date.now() + request.timeout_s * 1000)
    const info = await this.#host.create(
      { ttl_s: SESSION_LIMITS.maxTtlS, ...(request.memory_mb === undefined ? {} : { memory_mb: request.memory_mb }) },
      key,
      { env: request.env ?? {}, home: SANDBOX_HOME, endAt }
    )
    const token = randomBytes(24).toString('hex')
    const sandbox: Sandbox = {
      id: info.session_id,
      key,
      token,
      digest: sha256(token),
      template: request.template,
      labels: { ...request.labels },
      startedAt: info.created_at,
      contexts: new Map(),
      defaults: {},
      forget: [],
      turn: Promise.resolve()
    }
    this.#newContext(sandbox, 'python', SANDBOX_HOME, true)
    this.#sandboxes.set(sandbox.id, sandbox)
    return this.#infoOf(sandbox, info, true)
  }

  list(key: string): SandboxInfo[] {
    return this.#host.list(key).flatMap((info) => {
      const sandbox = this.#sandboxes.get(info.session_id)
      return sandbox === undefined ? [] : [this.#infoOf(sandbox, info, false)]
    })
  }

  async call<C extends SandboxCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    context: CallContext = NO_CALL_CONTEXT
  ): Promise<SandboxAnswer<C>> {
    const call: SandboxCall = request
    const sandbox = this.#authorize(id, auth, call.op)
    if (AGENT_OPS.has(call.op)) return await this.#host.agentOf(id).call<SandboxAnswer<C>>(call)
    return (await this.#own(sandbox, call, 'key' in auth, context)) as SandboxAnswer<C>
  }

  async stream<C extends SandboxStreamCall>(
    id: string,
    auth: SandboxAuth,
    request: C,
    onEvent: (event: SandboxStreamEvent<C>) => void,
    signal?: AbortSignal
  ): Promise<void> {
    const call: SandboxStreamCall = request
    const sandbox = this.#authorize(id, auth, call.op as SandboxOp)
    if (call.op !== 'run') {
      await this.#host.agentOf(id).stream(call, onEvent as (event: SandboxEvent) => void, signal)
      return
    }
    const events = onEvent as RunEvents
    const context = callContext({ signal })
    const run = await this.#turn(sandbox, async () => await this.#run(sandbox, call, context, events))
    events({ event: 'ran', run })
  }

  /** Closes every JavaScript context (the runner's close; the sessions end with the host). */
  close(): void {
    this.#js.close()
  }

  /** The calls a sandbox answers itself (not its agent). */
  async #own(sandbox: Sandbox, call: SandboxCall, byKey: boolean, context: CallContext): Promise<unknown> {
    switch (call.op) {
      case 'info':
        return this.#infoOf(sandbox, this.#host.get(sandbox.id), byKey)
      case 'set_timeout':
        return this.#infoOf(sandbox, this.#host.setEnd(sandbox.id, new Date(Date.now() + call.timeout_s * 1000)), byKey)
      case 'kill':
        await this.#host.close(sandbox.id)
        return {}
      case 'run':
        return await this.#turn(sandbox, async () => await this.#run(sandbox, call, context))
      case 'context_create':
        return this.#public(this.#newContext(sandbox, call.language, call.cwd ?? SANDBOX_HOME, false))
      case 'context_list':
        return { contexts: [...sandbox.contexts.values()].map((c) => this.#public(c)) }
      case 'context_restart': {
        const context = this.#context(sandbox, call.context)
        this.#restart(sandbox, context)
        return {}
      }
      case 'context_remove': {
        const context = this.#context(sandbox, call.context)
        this.#restart(sandbox, context)
        sandbox.contexts.delete(context.id)
        if (sandbox.defaults[context.language] === context.id) delete sandbox.defaults[context.language]
        return {}
      }
      default:
        throw new SandboxError('SF_ERR_SANDBOX_BAD_ARGUMENT', `unknown call ${JSON.stringify(call.op)}`)
    }
  }

  /** Who may call `op` on sandbox `id`: its key, its token; code contexts with no token too. */
  #authorize(id: string, auth: SandboxAuth, op: SandboxOp): Sandbox {
    const sandbox = this.#sandboxes.get(id)
    if ('key' in auth) {
      this.#host.get(id, auth.key) // throws not found (another key's) or lost
      if (sandbox === undefined) throw new SessionError(SESSION_NOT_FOUND, `no sandbox ${id} on this runner`)
      return sandbox
    }
    if (sandbox === undefined) {
      this.#host.get(id) // lost, or not found
      throw new SessionError(SESSION_NOT_FOUND, `no sandbox ${id} on this runner`)
    }
    if (auth.token === undefined) {
      if (TOKENLESS_OPS.has(op)) return sandbox
      throw new SandboxError(SANDBOX_TOKEN, `sandbox ${id}: an access token is required`)
    }
    if (!timingSafeEqual(sha256(auth.token), sandbox.digest))
      throw new SandboxError(SANDBOX_TOKEN, `sandbox ${id}: the access token is wrong`)
    return sandbox
  }

  /** Runs `work` after the sandbox's run before it. */
  async #turn<T>(sandbox: Sandbox, work: () => Promise<T>): Promise<T> {
    const mine = sandbox.turn.then(work, work)
    sandbox.turn = mine.catch(() => {})
    return await mine
  }

  /**
   * One run; with `events`, streamed: `running` once it has its turn and its context, then its output as it comes
   * (a JavaScript context's when its run ends: the isolate holds it till then); `ran` is its caller's to send.
   */
  async #run(
    sandbox: Sandbox,
    call: SandboxCalls['run']['request'],
    callContext: CallContext,
    events?: RunEvents
  ): Promise<SandboxRun> {
    const context =
      call.context !== undefined
        ? this.#context(sandbox, call.context)
        : this.#defaultContext(sandbox, call.language ?? 'python')
    const timeout = call.timeout_ms ?? this.#opts.maxTimeoutMs
    context.runs++
    events?.({ event: 'running', execution_count: context.runs })
    if (context.language === 'javascript') {
      const ran = await this.#js.run(context.key, call.code, timeout, this.#opts.runnerId, events !== undefined)
      for (const stream of ['stdout', 'stderr'] as const)
        if (ran.result[stream] !== '') events?.({ event: 'output', stream, text: ran.result[stream] })
      return { ...ran, execution_count: context.runs }
    }
    const forget = sandbox.forget.splice(0)
    const result = await this.#host.executeCell(
      sandbox.id,
      { code: call.code, timeout_ms: timeout },
      {
        context: context.key,
        cwd: context.cwd,
        main_key: MAIN_KEY,
        ...(forget.length > 0 ? { forget } : {}),
        ...(call.env === undefined ? {} : { env: call.env })
      },
      callContext,
      events === undefined ? undefined : (stream, text) => events({ event: 'output', stream, text })
    )
    const results: SandboxDisplay[] = (result.display ?? []).map((item) => {
      const { [MAIN_KEY]: main, ...data } = item
      return { data, main: main !== undefined }
    })
    delete result.display
    return { result, results, execution_count: context.runs }
  }

  #newContext(sandbox: Sandbox, language: ContextLanguage, cwd: string, isDefault: boolean): Context {
    if (language === 'javascript' && !this.#js.available)
      throw new SandboxError(
        'SF_ERR_SANDBOX_UNSUPPORTED',
        `javascript contexts need isolated-vm, which this runner cannot load (${this.#js.unavailable ?? ''})`
      )
    const id = randomBytes(8).toString('hex')
    const context: Context = { id, language, cwd, key: `${id}.0`, generation: 0, runs: 0 }
    sandbox.contexts.set(id, context)
    if (isDefault) sandbox.defaults[language] = id
    return context
  }

  #defaultContext(sandbox: Sandbox, language: ContextLanguage): Context {
    const id = sandbox.defaults[language]
    const context = id === undefined ? undefined : sandbox.contexts.get(id)
    return context ?? this.#newContext(sandbox, language, SANDBOX_HOME, true)
  }

  #context(sandbox: Sandbox, id: string): Context {
    const context = sandbox.contexts.get(id)
    if (context === undefined)
      throw new SandboxError(
        'SF_ERR_SANDBOX_CONTEXT_NOT_FOUND',
        `no code context ${JSON.stringify(id)} in ${sandbox.id}`
      )
    return context
  }

  /** A context's state dropped: Python's dict with the next cell, JavaScript's isolate context at once. */
  #restart(sandbox: Sandbox, context: Context): void {
    if (context.language === 'javascript') this.#js.drop(context.key)
    else sandbox.forget.push(context.key)
    context.generation++
    context.key = `${context.id}.${context.generation}`
    context.runs = 0
  }

  #public(context: Context): SandboxContext {
    return { id: context.id, language: context.language, cwd: context.cwd }
  }

  #infoOf(sandbox: Sandbox, info: SessionInfo, withToken: boolean): SandboxInfo {
    return {
      sandbox_id: sandbox.id,
      runner: this.#opts.runnerId,
      template: sandbox.template,
      labels: { ...sandbox.labels },
      memory_mb: info.memory_mb,
      started_at: sandbox.startedAt,
      end_at: info.expires_at,
      owner: sandbox.key,
      ...(withToken ? { token: sandbox.token } : {})
    }
  }
}
