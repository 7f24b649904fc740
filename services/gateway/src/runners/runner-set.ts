/**
 * The runners a gateway routes to: discovered from a list of URLs, from DNS (a headless
 * Kubernetes service, re-resolved periodically) or handed over in-process; each one's load
 * polled from `/v1/runner/load`, each on its own schedule; {@link RunnerSet.pick} returns the
 * least loaded.
 *
 * Liveness: a member counts when its runner last answered this gateway anything (a load report,
 * a call's answer, a line of a streamed batch). One that has answered nothing for `silenceMs`
 * (paused, partitioned, its event loop stuck) is marked down at once, not after its load polls
 * time out, and the calls in flight on it are aborted ({@link RunnerMember.silenced}): the router
 * answers them `infra_error`, maybe run (the runner may have started them and may still finish
 * them), and stops routing to it until a load report comes back. A runner whose connection is
 * refused or reset is down at once too.
 */
import { lookup } from 'node:dns/promises'
import type { RunnerLoad } from '@sandfleet/protocol'
import type { RunnerClient } from './runner-client.ts'
import { uncoveredGrace } from './grace-agreement.ts'
import { HttpRunnerClient } from './http-runner-client.ts'

/** Minimal logger the set reports membership changes to. */
export interface SetLogger {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

/** Why a member's calls in flight were aborted: its runner stopped answering this gateway. */
export class RunnerSilentError extends Error {
  constructor(
    readonly runner: string,
    readonly silentMs: number
  ) {
    super(
      `runner ${runner} answered nothing for ${Math.round(silentMs)} ms (paused, cut off, or stuck): marked down; the call may have started there`
    )
    this.name = 'RunnerSilentError'
  }
}

/** One runner in the set, with what the gateway knows of its load. */
export class RunnerMember {
  readonly client: RunnerClient
  /** Last load report, null before the first one. */
  load: RunnerLoad | null = null
  /** False after a failed poll or call, until a poll succeeds. */
  up = true
  /** When the runner last answered this gateway anything (`performance.now()`). */
  lastAnswerAt = performance.now()
  /** A load poll is out (one at a time). */
  polling = false
  #silence = new AbortController()
  /**
   * Why this gateway does not route to it: its last load report says it may answer later than
   * the client waits (grace-agreement.ts); undefined when it agrees.
   */
  refused: string | undefined = undefined
  /** Calls this gateway has in flight on it now. */
  outstanding = 0
  #outstandingAtPoll = 0

  constructor(client: RunnerClient) {
    this.client = client
  }

  /** The runner's id from its load report (its name until one arrived). */
  get id(): string {
    return this.load?.runner ?? this.client.name
  }

  /** True when it may be given a call. */
  get routable(): boolean {
    const state = this.load?.state
    return this.up && this.refused === undefined && state !== 'draining' && state !== 'closed'
  }

  /**
   * Estimated (running + queued) / capacity: the last report, corrected by what this gateway
   * sent or got back since.
   */
  score(): number {
    const capacity = Math.max(1, this.load?.capacity ?? 1)
    const reported = this.load === null ? 0 : this.load.in_flight + this.load.queued
    const estimate = Math.max(this.outstanding, reported - this.#outstandingAtPoll + this.outstanding)
    return estimate / capacity
  }

  /**
   * Aborted, with a {@link RunnerSilentError}, when the runner is found silent: a call made now watches it. A new one
   * is made for the calls after.
   */
  get silenced(): AbortSignal {
    return this.#silence.signal
  }

  /** The runner answered something: it is alive. */
  answered(): void {
    this.lastAnswerAt = performance.now()
  }

  /** The runner answered nothing for `silentMs`: down, its calls in flight aborted. */
  silence(silentMs: number): void {
    this.up = false
    const silenced = this.#silence
    this.#silence = new AbortController()
    silenced.abort(new RunnerSilentError(this.id, silentMs))
  }

  /** It answered that it drains: no more calls until a load report says otherwise. */
  markDraining(): void {
    if (this.load === null) this.up = false
    else if (this.load.state !== 'closed') this.load = { ...this.load, state: 'draining' }
  }

  /** Records a load report. */
  report(load: RunnerLoad): void {
    this.refused = this.client.graceMs === undefined ? undefined : uncoveredGrace(this.client.graceMs, load)
    this.load = load
    this.up = true
    this.#outstandingAtPoll = this.outstanding
    this.answered()
  }
}

/** Where the set's members come from. */
export interface RunnerSetOptions {
  /** Ready-made clients (in-process runners, tests). */
  clients?: RunnerClient[]
  /** Runner base URLs. */
  urls?: readonly string[]
  /** `host:port` resolved to every address it has; one member per address. */
  dns?: string
  dnsRefreshMs?: number
  loadPollMs?: number
  /**
   * How long a runner may answer nothing before it is marked down and its calls in flight aborted (at least two load
   * polls; default 2000).
   */
  silenceMs?: number
  /** Options of the HTTP clients the set makes (see `HttpRunnerClientOptions`). */
  connections?: number
  queueTimeoutMs?: number
  graceMs?: number
  /** The fleet's shared secret, sent to every runner (empty or absent: none). */
  secret?: string
  logger?: SetLogger
}

const noLog: SetLogger = { info() {}, warn() {}, error() {} }

/** True when `err` (a runner client's) is a timeout of the answer, not a refused or broken connection. */
function timedOut(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
}

/** The fleet as one gateway sees it. */
export class RunnerSet {
  readonly #members = new Map<string, RunnerMember>()
  readonly #options: RunnerSetOptions
  readonly #log: SetLogger
  #timers: NodeJS.Timeout[] = []
  #state: 'idle' | 'running' | 'closed' = 'idle'

  constructor(options: RunnerSetOptions) {
    this.#options = options
    this.#log = options.logger ?? noLog
    for (const c of options.clients ?? []) this.#members.set(c.name, new RunnerMember(c))
    for (const url of options.urls ?? []) this.#add(url)
  }

  /** Members now, in discovery order. */
  get members(): RunnerMember[] {
    return [...this.#members.values()]
  }

  #add(url: string): void {
    const { connections, queueTimeoutMs, graceMs, secret } = this.#options
    const client = new HttpRunnerClient(url, { connections, queueTimeoutMs, graceMs, secret })
    if (this.#members.has(client.name)) {
      void client.close()
      return
    }
    this.#members.set(client.name, new RunnerMember(client))
    this.#log.info({ runner: client.name }, 'runner added')
  }

  /** Resolves DNS once and reconciles the members with its answer. */
  async discover(): Promise<void> {
    const target = this.#options.dns
    if (target === undefined || target === '') return
    const at = target.lastIndexOf(':')
    const host = target.slice(0, at)
    const port = target.slice(at + 1)
    let addresses: string[]
    try {
      addresses = (await lookup(host, { all: true })).map((a) => (a.family === 6 ? `[${a.address}]` : a.address))
    } catch (err) {
      this.#log.warn({ dns: target, err: (err as Error).message }, 'runner discovery failed; keeping the current set')
      return
    }
    const wanted = new Set(addresses.map((a) => new URL(`http://${a}:${port}`).origin))
    const added: RunnerMember[] = []
    for (const origin of wanted) {
      if (this.#members.has(origin)) continue
      this.#add(origin)
      const member = this.#members.get(origin)
      if (member !== undefined) added.push(member)
    }
    for (const [name, member] of this.#members) {
      if (
        member.client instanceof HttpRunnerClient &&
        !wanted.has(name) &&
        !(this.#options.urls ?? []).includes(name)
      ) {
        this.#members.delete(name)
        this.#log.info({ runner: name }, 'runner removed')
        // let calls in flight finish on it before closing its connections
        void waitIdle(member).then(() => member.client.close())
      }
    }
    // a runner that joined is polled now, so it takes calls within one re-resolve period
    if (added.length > 0) await this.#pollMembers(added)
  }

  /** Polls every member's load once. */
  async poll(): Promise<void> {
    await this.#pollMembers(this.members)
  }

  async #pollMembers(members: RunnerMember[]): Promise<void> {
    await Promise.all(members.map(async (m) => await this.#pollOne(m)))
  }

  /** Polls one member's load (one poll at a time a member: a runner that does not answer holds up no other's). */
  async #pollOne(m: RunnerMember): Promise<void> {
    if (m.polling) return
    m.polling = true
    try {
      const wasRefused = m.refused
      const wasUp = m.up
      m.report(await m.client.load())
      if (!wasUp) this.#log.info({ runner: m.client.name }, 'runner answers again: taken back')
      if (m.refused !== undefined && m.refused !== wasRefused)
        this.#log.error({ runner: m.client.name }, `runner refused: ${m.refused}`)
      else if (m.refused === undefined && wasRefused !== undefined)
        this.#log.info({ runner: m.client.name }, "runner taken back: this gateway's callGraceMs covers it now")
    } catch (err) {
      // a report that came late says the runner (or this gateway) is slow, not that it is gone:
      // its silence (#watch) decides; a refused or broken connection takes it out at once
      if (timedOut(err) && m.load !== null) return
      if (m.up) this.#log.warn({ runner: m.client.name, err: (err as Error).message }, 'runner load poll failed')
      m.up = false
    } finally {
      m.polling = false
    }
  }

  /** How long a runner may answer nothing before it is marked down. */
  get silenceMs(): number {
    return Math.max(this.#options.silenceMs ?? 2000, 2 * (this.#options.loadPollMs ?? 500))
  }

  /** Marks down every member that answered nothing for {@link silenceMs}, aborting its calls in flight. */
  watch(now = performance.now()): void {
    const limit = this.silenceMs
    for (const m of this.#members.values()) {
      const silentMs = now - m.lastAnswerAt
      if (!m.up || silentMs < limit) continue
      this.#log.warn({ runner: m.client.name, silentMs: Math.round(silentMs) }, 'runner silent: marked down')
      m.silence(silentMs)
    }
  }

  /** Discovers and polls once, then keeps doing both in the background. */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return
    this.#state = 'running'
    await this.discover()
    await this.poll()
    const every = (ms: number, fn: () => Promise<void>): void => {
      let busy = false
      const t = setInterval(() => {
        if (busy) return
        busy = true
        fn().finally(() => {
          busy = false
        })
      }, ms)
      t.unref()
      this.#timers.push(t)
    }
    const pollMs = this.#options.loadPollMs ?? 500
    const poll = setInterval(() => {
      for (const m of this.#members.values()) void this.#pollOne(m)
    }, pollMs)
    poll.unref()
    this.#timers.push(poll)
    const watch = setInterval(() => this.watch(), Math.max(10, Math.min(250, Math.floor(this.silenceMs / 8))))
    watch.unref()
    this.#timers.push(watch)
    if (this.#options.dns !== undefined && this.#options.dns !== '')
      every(this.#options.dnsRefreshMs ?? 5000, () => this.discover())
  }

  /**
   * The least loaded routable member not in `exclude`, preferring runners that reported
   * `ready` over ones still starting. Undefined when none is left.
   */
  pick(exclude?: ReadonlySet<RunnerMember>): RunnerMember | undefined {
    let best: RunnerMember | undefined
    let bestScore = Infinity
    let bestReady = false
    for (const m of this.#members.values()) {
      if (!m.routable || exclude?.has(m) === true) continue
      const ready = m.load?.state === 'ready'
      const score = m.score()
      if ((ready && !bestReady) || (ready === bestReady && score < bestScore)) {
        best = m
        bestScore = score
        bestReady = ready
      }
    }
    return best
  }

  /** The member whose runner id (or name) is `id`, if it is routable. */
  byId(id: string): RunnerMember | undefined {
    for (const m of this.#members.values()) if ((m.id === id || m.client.name === id) && m.routable) return m
    return undefined
  }

  /** Why each member this gateway refuses for its settings is refused (see {@link RunnerMember.refused}). */
  refusals(): string[] {
    return this.members.flatMap((m) => (m.refused === undefined ? [] : [m.refused]))
  }

  /** True when at least one member reported `ready`, is up and not refused. */
  ready(): boolean {
    for (const m of this.#members.values())
      if (m.up && m.refused === undefined && m.load?.state === 'ready') return true
    return false
  }

  /** Stops polling and closes every client. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return
    this.#state = 'closed'
    for (const t of this.#timers) clearInterval(t)
    this.#timers = []
    await Promise.all(this.members.map((m) => m.client.close()))
  }
}

async function waitIdle(m: RunnerMember): Promise<void> {
  for (let i = 0; i < 600 && m.outstanding > 0; i++) await new Promise((resolve) => setTimeout(resolve, 100))
}
