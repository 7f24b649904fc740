/**
 * The runner: one pool of pre-warmed sandboxes per language it serves, behind one API that the
 * HTTP app (`app.ts`) and the gateway's in-process adapter both use. This class holds the
 * lifecycle and takes the calls; its parts are in `runner/`: which backend serves each language
 * (`backend-plan.ts`), putting it together and taking it apart (`assembly.ts`), a call checked
 * and resolved once (`prepared-call.ts`, with the runner's own limits in `request-check.ts`), its
 * load and info reports (`reports.ts`).
 *
 * {@link Runner.execute} never rejects: every fault becomes a status (`invalid_request` for a
 * request over the runner's limits, `overloaded`, `queue_timeout`, `infra_error` for the
 * fleet's faults, a user status when the code ran).
 */
import {
  JUDGE_LANGUAGES,
  NO_CALL_CONTEXT,
  failedJudgeResult,
  failedResult,
  type CallContext,
  type ExecRequest,
  type ExecResult,
  type JudgeBatchResultListener,
  type JudgeRequest,
  type JudgeResult,
  type Language,
  type RunnerApi,
  type RunnerInfo,
  type RunnerLoad,
  type RunnerState
} from '@sandfleet/protocol'
import type { Registry } from 'prom-client'
import { messageOf } from '@sandfleet/protocol/http'
import type { RunnerConfig } from '../config.ts'
import type { Driver, IsolationReport, PooledJob } from '../sandbox/contract.ts'
import { RUNNER_ERRORS, RunnerError, type RunnerErrorCode } from '../errors.ts'
import { silentLogger, type Logger } from '../logger.ts'
import { RunnerMetrics } from '../metrics.ts'
import type { PoolStats } from '../pool/pool.ts'
import type { SessionHost } from '../sessions/session-host.ts'
import type { SessionSandboxes } from '../sessions/session-sandboxes.ts'
import { assemble, release } from './assembly.ts'
import { CallMemory, requestDigest } from './call-memory.ts'
import { prepareCall, type PreparedCall } from '../requests/prepared-call.ts'
import { prepareJudge, type PreparedJudge } from '../judge/prepared-judge.ts'
import { Judges } from '../judge/judges.ts'
import { languageProblem } from '../requests/request-check.ts'
import { infoReport, isolationOf, isolationsOf, loadReport } from './reports.ts'
import { noParts, type RunnerParts } from './runner-parts.ts'

export type { RequestProblem } from '../requests/request-check.ts'
export type { PreparedCall } from '../requests/prepared-call.ts'

/** Options of a {@link Runner}. */
export interface RunnerOptions {
  /** Where the runner logs (a pino logger fits); silent by default. */
  logger?: Logger
  /**
   * Use this driver (already made, not yet checked) for the languages it declares instead of choosing by
   * `config.backend`.
   */
  driver?: Driver
  /**
   * Export the process's `sandfleet_build_info` and default process/Node.js metrics in
   * {@link Runner.registry} (default false: an embedder such as `sandfleet serve` exports them once, in the gateway's).
   */
  processMetrics?: boolean
}

/** The runner; see the module comment. Its API to gateways is the protocol's {@link RunnerApi}. */
export class Runner implements RunnerApi {
  /** The runner's id, unique in the fleet; in every result. */
  readonly id: string
  /** The configuration it runs with. */
  readonly config: RunnerConfig
  /** Its Prometheus registry (its own, not the global one). */
  readonly registry: Registry
  readonly #log: Logger
  readonly #metrics: RunnerMetrics
  /** The calls it ran, by request id, for a while: a retry is answered from its first run (`call-memory.ts`). */
  readonly #memory: CallMemory
  readonly #givenDriver: Driver | undefined
  readonly #parts: RunnerParts = noParts()
  /** The pools by language (the parts' own map). */
  readonly #pools = this.#parts.pools
  /** Its judging: the languages, the compile cache, the compilers' versions. */
  readonly #judges: Judges
  #state: RunnerState = 'starting'
  #starting: Promise<void> | undefined
  #closing: Promise<void> | undefined

  constructor(config: RunnerConfig, options: RunnerOptions = {}) {
    this.config = config
    this.id = config.id
    this.#log = options.logger ?? silentLogger
    this.#givenDriver = options.driver
    this.#metrics = new RunnerMetrics(this.id, options.processMetrics === true)
    this.#memory = new CallMemory({ maxCalls: config.replayCalls, windowMs: config.replayWindowS * 1000 })
    this.registry = this.#metrics.registry
    this.#judges = new Judges({
      drivers: () => new Map([...this.#pools].map(([language, pool]) => [language, pool.driver])),
      submit: (job, done) => {
        this.#submit({ job, problem: undefined, requestId: undefined, context: NO_CALL_CONTEXT }, done)
      },
      queueTimeoutMs: config.queueTimeoutMs,
      cacheBytes: config.judgeCacheBytes,
      maxOutputBytes: config.maxJudgeOutputBytes,
      echoBytes: config.maxOutputBytes,
      javascriptVersion: process.versions.v8
    })
    this.#metrics.judges(() => this.#judges.counters())
  }

  /** Lifecycle: `starting` until {@link start} resolves, `ready`, `draining` in {@link close}, `closed`. */
  get state(): RunnerState {
    return this.#state
  }

  /** Which backend the Python pool uses and why (after {@link start}), to print at start-up. */
  get backendReason(): string {
    return this.#parts.backendReason
  }

  /**
   * The runner's stateful sessions (after {@link start}), held in a sandbox of the Python
   * backend; undefined when `maxSessions` is 0 or the backend cannot hold sessions.
   */
  get sessions(): SessionHost | undefined {
    return this.#parts.sessions
  }

  /** The runner's sandboxes: sessions with files, processes and code contexts (undefined with no sessions). */
  get sandboxes(): SessionSandboxes | undefined {
    return this.#parts.sandboxes
  }

  /** Languages served (after {@link start}). */
  get languages(): Language[] {
    return [...this.#pools.keys()]
  }

  /**
   * Checks the drivers (`driver.check()`), then warms every pool; resolves when each pool has
   * a sandbox ready. Rejects with a clear message when no backend fits or no sandbox starts,
   * after releasing what it started. Idempotent.
   */
  start(): Promise<void> {
    this.#starting ??= this.#start()
    return this.#starting
  }

  async #start(): Promise<void> {
    try {
      await assemble(this.#parts, {
        runnerId: this.id,
        config: this.config,
        logger: this.#log,
        metrics: this.#metrics,
        given: this.#givenDriver
      })
      if (this.#state === 'starting') this.#state = 'ready'
      this.#log.info({ runner: this.id, languages: this.languages, poolSize: this.config.poolSize }, 'runner ready')
    } catch (err) {
      await release(this.#parts, { runnerId: this.id, logger: this.#log })
      this.#state = 'closed'
      throw err
    }
  }

  /**
   * Checks `request` against the runner's own limits (a field over the configured limits, a
   * language it does not serve) and resolves its defaults, once, in the call's `context` (none:
   * the runner's own `queueTimeoutMs` alone bounds its wait): the complete, frozen job to run, or
   * why it is refused (what the HTTP app answers 400). Schema validation is the caller's (the
   * HTTP app validates with the protocol's schema). {@link execute} is `run(prepare(request, context))`.
   */
  prepare(request: ExecRequest, context: CallContext = NO_CALL_CONTEXT): PreparedCall {
    return prepareCall(request, context, this.config, this.#pools)
  }

  /**
   * Runs one request in `context` and resolves with its result; never rejects (a job whose
   * caller's signal aborts while it waits is answered `queue_timeout`, SF_ERR_RUNNER_CANCELLED).
   * Defaults come from the contract; `runner`, `sandbox`, `queue_ms` and `request_id` are filled in.
   */
  execute(request: ExecRequest, context?: CallContext): Promise<ExecResult> {
    return this.run(this.prepare(request, context))
  }

  /** Runs one {@link prepare}d call (once); a refused one is answered `invalid_request`. Never rejects. */
  run(call: PreparedCall): Promise<ExecResult> {
    return new Promise((resolve) => {
      this.#submit(call, resolve)
    })
  }

  /**
   * Runs many requests in one `context`, queued in order; resolves with the results in request
   * order. `onResult` sees each result as soon as it is ready, with its index (completion order;
   * an item refused at once, such as one over the runner's limits, is seen before this returns).
   * Never rejects.
   */
  executeBatch(
    requests: ExecRequest[],
    onResult?: (index: number, result: ExecResult) => void,
    context?: CallContext
  ): Promise<ExecResult[]> {
    return this.runBatch(
      requests.map((request) => this.prepare(request, context)),
      onResult
    )
  }

  /** {@link executeBatch} of {@link prepare}d calls. */
  runBatch(
    calls: readonly PreparedCall[],
    onResult?: (index: number, result: ExecResult) => void
  ): Promise<ExecResult[]> {
    const results = new Array<ExecResult>(calls.length)
    if (calls.length === 0) return Promise.resolve(results)
    return new Promise((resolve) => {
      let left = calls.length
      for (let i = 0; i < calls.length; i++) {
        this.#submit(calls[i], (result) => {
          results[i] = result
          if (onResult !== undefined) {
            try {
              onResult(i, result)
            } catch (err) {
              this.#log.error({ runner: this.id, err: messageOf(err) }, 'batch onResult callback threw')
            }
          }
          if (--left === 0) resolve(results)
        })
      }
    })
  }

  /**
   * A call comes in: `done` gets its result once, synchronously when it is refused at once. Its
   * job's deadline for waiting was fixed when it was prepared, so a wait for the runner's start
   * counts against it.
   */
  #submit(call: PreparedCall, done: (result: ExecResult) => void): void {
    if (this.#state === 'draining' || this.#state === 'closed') {
      done(this.#failed(call, 'infra_error', 'SF_ERR_RUNNER_DRAINING'))
      return
    }
    if (call.job === undefined) {
      const { code, field, message } = call.problem
      done(this.#failed(call, 'invalid_request', code, field === '' ? message : `${field}: ${message}`))
      return
    }
    const key = CallMemory.keyOf(call.requestId, call.job.tenant)
    if (key === undefined) {
      this.#dispatch(call, call.job, done)
      return
    }
    // a call with an id: a retry of one this runner ran, or runs, is answered from that run
    const recalled = this.#memory.begin(key, requestDigest(call.job.request))
    if (recalled.kind === 'replay') {
      this.#metrics.replayed(recalled.answer instanceof Promise ? 'running' : 'finished')
      if (recalled.answer instanceof Promise) void recalled.answer.then(done)
      else done(recalled.answer)
      return
    }
    this.#dispatch(call, call.job, (result) => {
      recalled.settle(result)
      done(result)
    })
  }

  /** Hands a call's job to its language's pool, once the runner has started. */
  #dispatch(call: PreparedCall, job: PooledJob, done: (result: ExecResult) => void): void {
    if (this.#state === 'draining' || this.#state === 'closed') {
      done(this.#failed(call, 'infra_error', 'SF_ERR_RUNNER_DRAINING'))
      return
    }
    if (this.#state === 'starting') {
      // Not started yet: wait for start() if it runs, else answer at once.
      if (this.#starting === undefined) {
        done(this.#failed(call, 'infra_error', 'SF_ERR_RUNNER_NOT_STARTED'))
        return
      }
      this.#starting.then(
        () => {
          this.#dispatch(call, job, done)
        },
        (err: unknown) => {
          done(
            this.#failed(
              call,
              'infra_error',
              'SF_ERR_RUNNER_NOT_STARTED',
              `the runner failed to start: ${messageOf(err)}`
            )
          )
        }
      )
      return
    }
    const language = job.request.language
    const pool = this.#pools.get(language)
    if (pool === undefined) {
      const { code, field, message } = languageProblem(language, this.#pools)
      done(this.#failed(call, 'invalid_request', code, `${field}: ${message}`))
      return
    }
    pool.submit(job, call.context, (result) => {
      this.#metrics.record(language, result)
      done(result)
    })
  }

  /**
   * Checks a judge request against the runner's limits and the contract, resolves its defaults and holds its language
   * to those the runner judges, once, in `context` (its deadline for waiting fixed now): the judge to run, or why it is
   * refused (what the HTTP app answers 400).
   */
  prepareJudge(request: JudgeRequest, context: CallContext = NO_CALL_CONTEXT): PreparedJudge {
    // before start, any language of the table: the judge checks it once the pools are there
    const judged = this.#pools.size === 0 ? new Set(JUDGE_LANGUAGES) : this.#judges.languages()
    return prepareJudge(request, context, this.config, judged)
  }

  /** Judges one program against its tests in `context` and resolves with its verdict; never rejects. */
  judge(request: JudgeRequest, context?: CallContext): Promise<JudgeResult> {
    return this.runJudge(this.prepareJudge(request, context))
  }

  /** Runs one {@link prepareJudge}d judge; a refused one is answered `invalid_request`. Never rejects. */
  async runJudge(prepared: PreparedJudge): Promise<JudgeResult> {
    let result: JudgeResult
    if (prepared.judge === undefined) {
      const { code, field, message } = prepared.problem
      result = this.#failedJudge(prepared, 'invalid_request', code, field === '' ? message : `${field}: ${message}`)
    } else if (this.#state === 'draining' || this.#state === 'closed') {
      result = this.#failedJudge(prepared, 'infra_error', 'SF_ERR_RUNNER_DRAINING')
    } else {
      if (this.#state === 'starting' && this.#starting !== undefined) await this.#starting.catch(() => {})
      const { judge, requestId, context } = prepared
      // prepared before the pools were there: its languages checked now
      const judged = this.#judges.languages()
      const missing = [judge.language, judge.compare.kind === 'checker' ? judge.compare.language : judge.language].find(
        (language) => !judged.has(language)
      )
      result =
        missing !== undefined
          ? this.#failedJudge(
              prepared,
              'invalid_request',
              'SF_ERR_RUNNER_LANGUAGE',
              `this runner does not judge ${missing} (it judges ${[...judged].join(', ')})`
            )
          : await this.#judges.run(
              judge,
              requestId,
              { startBy: prepared.startBy, tenant: context.tenant },
              (job, done) => {
                this.#submit({ job, problem: undefined, requestId, context }, done)
              }
            )
      if (result.runner === '') result.runner = this.id
    }
    this.#metrics.judged(result)
    return result
  }

  /** Judges many in one `context` (one deadline for all); resolves with the results in request order, never rejects. */
  judgeBatch(
    requests: JudgeRequest[],
    onResult?: JudgeBatchResultListener,
    context?: CallContext
  ): Promise<JudgeResult[]> {
    return this.runJudgeBatch(
      requests.map((request) => this.prepareJudge(request, context)),
      onResult
    )
  }

  /** {@link judgeBatch} of {@link prepareJudge}d judges. */
  async runJudgeBatch(prepared: readonly PreparedJudge[], onResult?: JudgeBatchResultListener): Promise<JudgeResult[]> {
    return await Promise.all(
      prepared.map(async (p, i) => {
        const result = await this.runJudge(p)
        try {
          onResult?.(i, result)
        } catch (err) {
          this.#log.error({ runner: this.id, err: messageOf(err) }, 'judge batch onResult callback threw')
        }
        return result
      })
    )
  }

  /** The load report gateways route by (`GET /v1/runner/load`). */
  load(): RunnerLoad {
    return loadReport(this, this.#parts)
  }

  /**
   * What this runner runs (`GET /v1/info`): its backend and why, the isolation of each language's
   * pool, and the Python pool's environment manifest (read by the driver at start-up).
   */
  info(): RunnerInfo {
    const info = infoReport(this, this.#parts)
    if (this.#pools.size === 0) return info
    // the compilers' versions are read in a sandbox when first needed: the first report lists them as unknown
    if (this.#pools.get('python')?.driver.judges === true)
      this.#judges.probe().catch((err: unknown) => {
        this.#log.warn({ runner: this.id, err: messageOf(err) }, "the probe of the sandboxes' compilers failed")
      })
    return { ...info, judge_languages: this.#judges.info() }
  }

  /** Counters of each pool (warm, busy, starting, queued, replacements, time to replace). */
  poolStats(): PoolStats[] {
    return [...this.#pools.values()].map((pool) => pool.stats())
  }

  /**
   * What the Python pool's backend protects against (the first pool's when there is no Python). Throws before {@link
   * start}.
   */
  isolation(): IsolationReport {
    const driver = this.#pools.get('python')?.driver ?? this.#parts.drivers[0] ?? this.#givenDriver
    if (driver === undefined)
      throw new RunnerError('SF_ERR_RUNNER_NOT_STARTED', 'isolation() is known once start() chose a backend')
    return isolationOf(driver)
  }

  /** The isolation report of every pool, by language. */
  isolations(): Partial<Record<Language, IsolationReport>> {
    return isolationsOf(this.#parts)
  }

  /**
   * Drains (new jobs answered `infra_error`; queued and running ones may finish for
   * `drainTimeoutMs`), then closes every sandbox and driver. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    if (this.#state !== 'closed') this.#state = 'draining'
    if (this.#starting !== undefined) await this.#starting.catch(() => {})
    this.#state = 'draining'
    await release(this.#parts, { runnerId: this.id, logger: this.#log }, this.config.drainTimeoutMs)
    this.#state = 'closed'
  }

  #failedJudge(
    prepared: PreparedJudge,
    verdict: JudgeResult['verdict'],
    code: RunnerErrorCode,
    message?: string
  ): JudgeResult {
    const language = prepared.judge?.language ?? 'python'
    const result = failedJudgeResult(verdict, language, code, message ?? RUNNER_ERRORS[code].message, {
      runner: this.id
    })
    // refused before any pool took it: nothing ran
    if (verdict !== 'invalid_request') result.maybe_ran = false
    if (prepared.requestId !== undefined) result.request_id = prepared.requestId
    return result
  }

  /** The answer of a call the runner refused before any pool took it: nothing ran. */
  #failed(call: PreparedCall, status: ExecResult['status'], code: RunnerErrorCode, message?: string): ExecResult {
    const result = failedResult(status, code, message ?? RUNNER_ERRORS[code].message, { runner: this.id })
    if (status !== 'invalid_request') result.maybe_ran = false
    if (call.requestId !== undefined) result.request_id = call.requestId
    return result
  }
}
