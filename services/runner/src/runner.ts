/**
 * The runner: one pool of pre-warmed sandboxes per language it serves, behind one API that the
 * HTTP app (`app.ts`) and the gateway's in-process adapter both use.
 *
 * {@link Runner.execute} never rejects: every fault becomes a status (`invalid_request` for a
 * request over the runner's limits, `overloaded`, `queue_timeout`, `infra_error` for the
 * fleet's faults, a user status when the code ran).
 */
import { LANGUAGES, failedResult, resolveExecRequest, type ExecRequest, type ExecResult, type Language, type RunnerInfo, type RunnerCallOptions, type RunnerLoad, type RunnerState } from '@sandfleet/protocol'
import type { Registry } from 'prom-client'
import type { RunnerConfig } from './config.ts'
import type { Driver, DriverOptions, IsolationReport } from './backends/contract.ts'
import { choosePythonDriver, createDriver, hasDriver, LANGUAGE_DRIVERS } from './backends/registry.ts'
import { messageOf, RUNNER_ERRORS, RunnerError, type RunnerErrorCode } from './errors.ts'
import { silentLogger, type Logger } from './logger.ts'
import { RunnerMetrics } from './metrics.ts'
import { Pool, type PoolStats } from './pool/pool.ts'
import { SessionHost, type SessionHostCommand } from './sessions/session-host.ts'

/** Options of a {@link Runner}. */
export interface RunnerOptions {
  /** Where the runner logs (a pino logger fits); silent by default. */
  logger?: Logger
  /** Use this driver (already made, not yet checked) for the languages it declares instead of choosing by `config.backend`. */
  driver?: Driver
  /**
   * Export the process's `sandfleet_build_info` and default process/Node.js metrics in
   * {@link Runner.registry} (default false: an embedder such as `sandfleet serve` exports them once, in the gateway's).
   */
  processMetrics?: boolean
}

/** Per-call options of {@link Runner.execute}: the protocol's {@link RunnerCallOptions} (an aborted job is answered `queue_timeout`, SF_ERR_RUNNER_CANCELLED). */
export type ExecuteOptions = RunnerCallOptions

/** A request the runner refuses before queueing: what the HTTP app turns into a 400. */
export interface RequestProblem {
  code: RunnerErrorCode
  message: string
  /** The field at fault (`timeout_ms`, `code`, `language`). */
  field: string
}

/** The runner; see the module comment. */
export class Runner {
  /** The runner's id, unique in the fleet; in every result. */
  readonly id: string
  /** The configuration it runs with. */
  readonly config: RunnerConfig
  /** Its Prometheus registry (its own, not the global one). */
  readonly registry: Registry
  readonly #log: Logger
  readonly #metrics: RunnerMetrics
  readonly #givenDriver: Driver | undefined
  readonly #pools = new Map<Language, Pool>()
  readonly #drivers: Driver[] = []
  #state: RunnerState = 'starting'
  #starting: Promise<void> | undefined
  #closing: Promise<void> | undefined
  #backendReason = ''
  #sessions: SessionHost | undefined

  constructor (config: RunnerConfig, options: RunnerOptions = {}) {
    this.config = config
    this.id = config.id
    this.#log = options.logger ?? silentLogger
    this.#givenDriver = options.driver
    this.#metrics = new RunnerMetrics(this.id, options.processMetrics === true)
    this.registry = this.#metrics.registry
  }

  /** Lifecycle: `starting` until {@link start} resolves, `ready`, `draining` in {@link close}, `closed`. */
  get state (): RunnerState {
    return this.#state
  }

  /** Which backend the Python pool uses and why (after {@link start}), to print at start-up. */
  get backendReason (): string {
    return this.#backendReason
  }

  /**
   * The runner's stateful sessions (after {@link start}), held in a sandbox of the Python
   * backend; undefined when `maxSessions` is 0 or the backend cannot hold sessions.
   */
  get sessions (): SessionHost | undefined {
    return this.#sessions
  }

  /** Languages served (after {@link start}). */
  get languages (): Language[] {
    return [...this.#pools.keys()]
  }

  /**
   * Checks the drivers (`driver.check()`), then warms every pool; resolves when each pool has
   * a sandbox ready. Rejects with a clear message when no backend fits or no sandbox starts,
   * after releasing what it started. Idempotent.
   */
  start (): Promise<void> {
    this.#starting ??= this.#start()
    return this.#starting
  }

  async #start (): Promise<void> {
    try {
      const options: DriverOptions = { config: this.config, logger: this.#log }
      const wanted = this.config.languages.length > 0 ? new Set<Language>(this.config.languages) : undefined
      let primary: Driver | undefined
      if (this.#givenDriver !== undefined) {
        primary = this.#givenDriver
        this.#drivers.push(primary)
        await primary.check()
        this.#backendReason = `backend ${primary.name} (given by the embedder): ${primary.describe().boundary}`
      } else if (wanted === undefined || wanted.has('python')) {
        const choice = await choosePythonDriver(this.config.backend, options)
        primary = choice.driver
        this.#drivers.push(primary)
        this.#backendReason = choice.reason
      } else {
        this.#backendReason = 'no Python pool (languages configured without python)'
      }
      this.#log.info({ runner: this.id, backend: primary?.name }, this.#backendReason)
      for (const language of primary?.languages ?? []) {
        if (wanted === undefined || wanted.has(language)) this.#addPool(language, primary as Driver)
      }
      for (const language of LANGUAGES) {
        if (this.#pools.has(language) || (wanted !== undefined && !wanted.has(language))) continue
        const name = LANGUAGE_DRIVERS[language]
        if (name === undefined || !hasDriver(name)) {
          if (wanted !== undefined) throw new RunnerError('SF_ERR_RUNNER_DRIVER_UNAVAILABLE', `language ${language} was asked for, but no driver for it is available in this runner`)
          continue
        }
        const driver = await createDriver(name, options)
        this.#drivers.push(driver)
        try {
          await driver.check()
        } catch (err) {
          if (wanted !== undefined) throw err
          this.#log.warn({ runner: this.id, language, err: messageOf(err) }, `not serving ${language}: its driver is unavailable`)
          continue
        }
        this.#addPool(language, driver)
      }
      if (this.#pools.size === 0) throw new RunnerError('SF_ERR_RUNNER_DRIVER_UNAVAILABLE', 'no language to serve: the configured languages match no driver')
      const sessionHost = this.config.maxSessions > 0 ? await this.#sessionHostCommand(options) : undefined
      if (sessionHost !== undefined) {
        this.#sessions = new SessionHost({
          runnerId: this.id,
          maxSessions: this.config.maxSessions,
          maxSessionsPerKey: this.config.maxSessionsPerKey,
          maxOutputBytes: this.config.maxOutputBytes,
          command: sessionHost
        })
      }
      this.#metrics.attach([...this.#pools.values()])
      await Promise.all([...this.#pools.values()].map(async (pool) => { await pool.start() }))
      if (this.#state === 'starting') this.#state = 'ready'
      this.#log.info({ runner: this.id, languages: this.languages, poolSize: this.config.poolSize }, 'runner ready')
    } catch (err) {
      await this.#release()
      this.#state = 'closed'
      throw err
    }
  }

  /**
   * How this runner starts its session host: in a sandbox of the Python backend, or, when that
   * backend holds no sessions (docker, pyodide), under bubblewrap if the host has it. Undefined:
   * no sandbox can hold sessions here, and the session API answers SF_ERR_SESSION_DISABLED.
   */
  async #sessionHostCommand (options: DriverOptions): Promise<SessionHostCommand | undefined> {
    const python = this.#pools.get('python')?.driver
    if (python?.sessionHost !== undefined) return python.sessionHost.bind(python)
    if (python === undefined || python.name === 'unsafe' || !hasDriver('process')) return undefined
    const fallback = await createDriver('process', options)
    try {
      await fallback.check()
    } catch (err) {
      this.#log.info({ runner: this.id, backend: python.name, err: messageOf(err) }, `sessions disabled: the ${python.name} backend holds none and bubblewrap is not available`)
      await fallback.close()
      return undefined
    }
    this.#drivers.push(fallback)
    this.#log.info({ runner: this.id, backend: python.name }, `sessions run under bubblewrap (the ${python.name} backend holds none)`)
    return fallback.sessionHost?.bind(fallback)
  }

  #addPool (language: Language, driver: Driver): void {
    const pool: Pool = new Pool({
      driver,
      language,
      runnerId: this.id,
      size: Math.min(this.config.poolSize, driver.maxPoolSize ?? Infinity),
      maxJobsPerSandbox: this.config.maxJobsPerSandbox,
      maxQueuedJobs: this.config.maxQueuedJobs,
      queueTimeoutMs: this.config.queueTimeoutMs,
      replaceBackoffMs: this.config.replaceBackoffMs,
      replaceBackoffMaxMs: this.config.replaceBackoffMaxMs,
      logger: this.#log,
      events: {
        replaced: (reason, ms) => { this.#metrics.replaced(pool, reason, ms) },
        startFailed: () => { this.#metrics.startFailed(pool) }
      }
    })
    this.#pools.set(language, pool)
  }

  /**
   * The first reason the runner would refuse `request` before queueing it (a field over the
   * configured limits, a language it does not serve), or `undefined`. Schema validation is the
   * caller's (the HTTP app validates with the protocol's schema).
   */
  check (request: ExecRequest): RequestProblem | undefined {
    const c = this.config
    if (typeof request.code !== 'string') return { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: 'code', message: 'code must be a string' }
    if (request.code.length > c.maxCodeBytes && Buffer.byteLength(request.code) > c.maxCodeBytes) {
      return { code: 'SF_ERR_RUNNER_LIMIT', field: 'code', message: `code is ${Buffer.byteLength(request.code)} bytes; this runner accepts at most ${c.maxCodeBytes}` }
    }
    if (request.timeout_ms !== undefined && request.timeout_ms > c.maxTimeoutMs) {
      return { code: 'SF_ERR_RUNNER_LIMIT', field: 'timeout_ms', message: `timeout_ms ${request.timeout_ms} is over this runner's limit of ${c.maxTimeoutMs}` }
    }
    if (request.memory_mb !== undefined && request.memory_mb > c.maxMemoryMb) {
      return { code: 'SF_ERR_RUNNER_LIMIT', field: 'memory_mb', message: `memory_mb ${request.memory_mb} is over this runner's limit of ${c.maxMemoryMb}` }
    }
    const language = request.language ?? 'python'
    if (this.#pools.size > 0 && !this.#pools.has(language)) {
      return { code: 'SF_ERR_RUNNER_LANGUAGE', field: 'language', message: `this runner does not serve ${language} (it serves ${this.languages.join(', ')})` }
    }
    return undefined
  }

  /**
   * Runs one request and resolves with its result; never rejects. Defaults come from the
   * contract; `runner`, `sandbox`, `queue_ms` and `request_id` are filled in.
   */
  execute (request: ExecRequest, options?: ExecuteOptions): Promise<ExecResult> {
    return new Promise((resolve) => { this.#submit(request, options, resolve) })
  }

  /** {@link execute} without a promise: `done` gets the result once, synchronously when it is refused at once. */
  #submit (request: ExecRequest, options: ExecuteOptions | undefined, done: (result: ExecResult) => void): void {
    if (this.#state === 'draining' || this.#state === 'closed') { done(this.#failed(request, 'infra_error', 'SF_ERR_RUNNER_DRAINING')); return }
    const problem = this.check(request)
    if (problem !== undefined) { done(this.#failed(request, 'invalid_request', problem.code, `${problem.field}: ${problem.message}`)); return }
    const language = request.language ?? 'python'
    const pool = this.#pools.get(language)
    if (pool === undefined || this.#state === 'starting') {
      // Not started yet: wait for start() if it runs, else answer at once.
      if (this.#starting === undefined) { done(this.#failed(request, 'infra_error', 'SF_ERR_RUNNER_NOT_STARTED')); return }
      const since = performance.now()
      // the wait for the start is a wait for a sandbox too: it counts against the caller's budget
      const later = (): ExecuteOptions | undefined => options?.queueTimeoutMs === undefined
        ? options
        : { ...options, queueTimeoutMs: Math.max(0, options.queueTimeoutMs - (performance.now() - since)) }
      this.#starting.then(() => { this.#submit(request, later(), done) }, (err: unknown) => { done(this.#failed(request, 'infra_error', 'SF_ERR_RUNNER_NOT_STARTED', `the runner failed to start: ${messageOf(err)}`)) })
      return
    }
    let resolved
    try {
      resolved = resolveExecRequest(request)
    } catch (err) {
      done(this.#failed(request, 'invalid_request', 'SF_ERR_RUNNER_INVALID_REQUEST', messageOf(err)))
      return
    }
    pool.submit({ request: resolved, maxOutputBytes: this.config.maxOutputBytes }, {
      requestId: request.request_id, signal: options?.signal, queueTimeoutMs: options?.queueTimeoutMs
    }, (result) => { this.#metrics.record(language, result); done(result) })
  }

  /**
   * Runs many requests, queued in order; resolves with the results in request order. `onResult`
   * sees each result as soon as it is ready, with its index (completion order; an item refused
   * at once, such as one over the runner's limits, is seen before this returns). `options` apply
   * to every item (one queue timeout for all, counted from this call). Never rejects.
   */
  executeBatch (requests: ExecRequest[], onResult?: (index: number, result: ExecResult) => void, options?: ExecuteOptions): Promise<ExecResult[]> {
    const results = new Array<ExecResult>(requests.length)
    if (requests.length === 0) return Promise.resolve(results)
    return new Promise((resolve) => {
      let left = requests.length
      for (let i = 0; i < requests.length; i++) {
        this.#submit(requests[i], options, (result) => {
          results[i] = result
          if (onResult !== undefined) {
            try { onResult(i, result) } catch (err) { this.#log.error({ runner: this.id, err: messageOf(err) }, 'batch onResult callback threw') }
          }
          if (--left === 0) resolve(results)
        })
      }
    })
  }

  /** The load report gateways route by (`GET /v1/runner/load`). */
  load (): RunnerLoad {
    const load: RunnerLoad = {
      runner: this.id,
      state: this.#state,
      backend: this.#pools.get('python')?.driver.name ?? this.#drivers[0]?.name ?? this.config.backend,
      languages: this.languages,
      capacity: 0,
      in_flight: 0,
      queued: 0,
      queue_limit: 0,
      warm: 0,
      busy: 0,
      sessions: this.#sessions?.size ?? 0,
      pools: {}
    }
    for (const [language, pool] of this.#pools) {
      const s = pool.stats()
      if (load.pools !== undefined) load.pools[language] = { capacity: s.size, queued: s.queued }
      load.capacity += s.size
      load.in_flight += s.busy
      load.busy += s.busy
      load.queued += s.queued
      load.queue_limit += s.queueLimit
      load.warm += s.warm
    }
    return load
  }

  /**
   * What this runner runs (`GET /v1/info`): its backend and why, the isolation of each language's
   * pool, and the Python pool's environment manifest (read by the driver at start-up).
   */
  info (): RunnerInfo {
    const python = this.#pools.get('python')?.driver
    const isolation: RunnerInfo['isolation'] = {}
    for (const [language, report] of Object.entries(this.isolations())) if (report !== undefined) isolation[language] = report
    return {
      runner: this.id,
      state: this.#state,
      backend: python?.name ?? this.#drivers[0]?.name ?? this.config.backend,
      backend_reason: this.#backendReason,
      languages: this.languages,
      pool_size: this.config.poolSize,
      isolation,
      manifest: python?.manifest?.() ?? null
    }
  }

  /** Counters of each pool (warm, busy, starting, queued, replacements, time to replace). */
  poolStats (): PoolStats[] {
    return [...this.#pools.values()].map((pool) => pool.stats())
  }

  /** What the Python pool's backend protects against (the first pool's when there is no Python). Throws before {@link start}. */
  isolation (): IsolationReport {
    const driver = this.#pools.get('python')?.driver ?? this.#drivers[0] ?? this.#givenDriver
    if (driver === undefined) throw new RunnerError('SF_ERR_RUNNER_NOT_STARTED', 'isolation() is known once start() chose a backend')
    return driver.describe()
  }

  /** The isolation report of every pool, by language. */
  isolations (): Partial<Record<Language, IsolationReport>> {
    const out: Partial<Record<Language, IsolationReport>> = {}
    for (const [language, pool] of this.#pools) out[language] = pool.driver.describe()
    return out
  }

  /**
   * Drains (new jobs answered `infra_error`; queued and running ones may finish for
   * `drainTimeoutMs`), then closes every sandbox and driver. Idempotent.
   */
  close (): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close (): Promise<void> {
    if (this.#state !== 'closed') this.#state = 'draining'
    if (this.#starting !== undefined) await this.#starting.catch(() => {})
    this.#state = 'draining'
    await this.#release(this.config.drainTimeoutMs)
    this.#state = 'closed'
  }

  async #release (drainTimeoutMs = 0): Promise<void> {
    await this.#sessions?.shutdown()
    await Promise.all([...this.#pools.values()].map(async (pool) => { await pool.close(drainTimeoutMs) }))
    await Promise.all(this.#drivers.map(async (driver) => {
      try { await driver.close() } catch (err) { this.#log.warn({ runner: this.id, driver: driver.name, err: messageOf(err) }, 'driver close failed') }
    }))
  }

  #failed (request: ExecRequest, status: ExecResult['status'], code: RunnerErrorCode, message?: string): ExecResult {
    const result = failedResult(status, code, message ?? RUNNER_ERRORS[code].message, { runner: this.id })
    if (typeof request?.request_id === 'string') result.request_id = request.request_id
    return result
  }
}
