/**
 * The runner's Prometheus metrics, in a registry of its own (never the global one), names
 * `sandfleet_runner_…`. Pool gauges are read from the pools when scraped; per-job counters and
 * histograms use label children bound once (`@sandfleet/metrics`), so the hot path does no label
 * validation or hashing. A runner that is its own process (`sandfleet runner`) also exports the
 * process's build info and default process/Node.js metrics here.
 */
import { fileURLToPath } from 'node:url'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import {
  buildCommit,
  counterChild,
  histogramChild,
  registerProcessMetrics,
  type CounterChild,
  type HistogramChild
} from '@sandfleet/metrics'
import runnerPackage from '../package.json' with { type: 'json' }
import { STATUSES, type ExecResult, type JudgeResult, type Language, type Status } from '@sandfleet/protocol'
import type { JudgeCounters } from './judge/judges.ts'
import type { ReuseEvent } from './sandbox/contract.ts'
import type { Pool, ReplaceReason } from './pool/pool.ts'
import type { StallCause } from './pool/slot-supervisor.ts'

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

interface Bound {
  executions: Map<Status, CounterChild>
  duration: HistogramChild
  queueWait: HistogramChild
}

/** The runner's metrics; {@link record} is called once per result. */
export class RunnerMetrics {
  /** The registry `GET /metrics` serves. */
  readonly registry = new Registry()
  readonly #executions: Counter<string>
  readonly #duration: Histogram<string>
  readonly #queueWait: Histogram<string>
  readonly #replacements: Counter<string>
  readonly #replaceSeconds: Histogram<string>
  readonly #startFailures: Counter<string>
  readonly #stalled: Counter<string>
  readonly #replayed: Counter<string>
  readonly #reuseJobs: Counter<string>
  readonly #reuseRetirements: Counter<string>
  readonly #judges: Counter<string>
  readonly #judgeTests: Counter<string>
  readonly #judgeSeconds: Histogram<string>
  readonly #bound = new Map<Language, Bound>()
  #pools: readonly Pool[] = []
  #judgeCounters: (() => JudgeCounters) | undefined

  /** `processMetrics`: also export `sandfleet_build_info` and the process/Node.js defaults (once per process). */
  constructor(runnerId: string, processMetrics = false) {
    const registers = [this.registry]
    this.registry.setDefaultLabels({ runner: runnerId })
    if (processMetrics)
      registerProcessMetrics(this.registry, {
        component: 'runner',
        version: runnerPackage.version,
        commit: buildCommit(fileURLToPath(import.meta.url))
      })
    this.#executions = new Counter({
      name: 'sandfleet_runner_executions_total',
      help: 'Jobs answered, by status, language and backend',
      labelNames: ['status', 'language', 'backend'],
      registers
    })
    this.#duration = new Histogram({
      name: 'sandfleet_runner_execution_duration_seconds',
      help: 'Run time of the code',
      labelNames: ['language', 'backend'],
      buckets: SECONDS,
      registers
    })
    this.#queueWait = new Histogram({
      name: 'sandfleet_runner_queue_wait_seconds',
      help: 'Time jobs waited for a sandbox',
      labelNames: ['language', 'backend'],
      buckets: SECONDS,
      registers
    })
    this.#replacements = new Counter({
      name: 'sandfleet_runner_sandbox_replacements_total',
      help: "Sandboxes replaced, by reason: what the sandbox could not undo after a job (unswept, cleanup, zygote, tampered, oom, broken, exited, ffi, files, grown, hard_stop, other), or the pool's own (crash, tampered, max_jobs, stalled)",
      labelNames: ['language', 'backend', 'reason'],
      registers
    })
    this.#replaceSeconds = new Histogram({
      name: 'sandfleet_runner_sandbox_replace_seconds',
      help: 'Time from a sandbox leaving service to its replacement being ready',
      labelNames: ['language', 'backend'],
      buckets: SECONDS,
      registers
    })
    this.#startFailures = new Counter({
      name: 'sandfleet_runner_sandbox_start_failures_total',
      help: 'Sandbox start attempts that failed',
      labelNames: ['language', 'backend'],
      registers
    })
    this.#stalled = new Counter({
      name: 'sandfleet_runner_stalled_jobs_total',
      help: "Jobs answered infra_error because they stalled (never timeout): by who stopped answering, the job's sandbox past its hard deadline (sandbox), or the runner itself, frozen past that deadline or across the job's timeout (runner)",
      labelNames: ['language', 'backend', 'cause'],
      registers
    })
    this.#replayed = new Counter({
      name: 'sandfleet_runner_replayed_total',
      help: 'Retries of a call this runner ran (its request_id, the same request) answered from that run instead of running again: finished (its first answer) or running (the retry waited for it)',
      labelNames: ['run'],
      registers
    })
    this.#reuseJobs = new Counter({
      name: 'sandfleet_runner_reuse_jobs_total',
      help: 'Python jobs that asked for the reuse isolation level, by the level they ran at and why not reuse (static: the code names what the check cannot follow; warming: no reuse process ready; unsupported: this interpreter cannot be checked)',
      labelNames: ['level', 'refused'],
      registers
    })
    this.#reuseRetirements = new Counter({
      name: 'sandfleet_runner_reuse_retirements_total',
      help: 'Reuse processes retired, by what their check found or how they ended',
      labelNames: ['reason'],
      registers
    })
    this.#judges = new Counter({
      name: 'sandfleet_runner_judges_total',
      help: 'Judges answered (POST /v1/judge), by verdict and language',
      labelNames: ['verdict', 'language'],
      registers
    })
    this.#judgeTests = new Counter({
      name: 'sandfleet_runner_judge_tests_total',
      help: "Judged tests, by their verdict (skipped: not run, after the judge's first failing test) and language",
      labelNames: ['verdict', 'language'],
      registers
    })
    this.#judgeSeconds = new Histogram({
      name: 'sandfleet_runner_judge_duration_seconds',
      help: 'How long a judge ran in its sandbox: its compile and its tests',
      labelNames: ['language'],
      buckets: SECONDS,
      registers
    })
    const judgeCounters = (): JudgeCounters | undefined => this.#judgeCounters?.()
    void new Counter({
      name: 'sandfleet_runner_judge_compile_cache_total',
      help: "The compile cache's lookups: hit (the binary shipped to the sandbox, nothing compiled) or miss",
      labelNames: ['result'],
      registers,
      collect() {
        const c = judgeCounters()
        this.reset()
        if (c === undefined) return
        this.inc({ result: 'hit' }, c.cache.hits)
        this.inc({ result: 'miss' }, c.cache.misses)
      }
    })
    void new Counter({
      name: 'sandfleet_runner_judge_tests_past_stop_total',
      help: "Tests a sandbox ran past a judge's first failing test before the runner's stop reached it (answered skipped)",
      registers,
      collect() {
        this.reset()
        this.inc(judgeCounters()?.ranPastStop ?? 0)
      }
    })
    void new Gauge({
      name: 'sandfleet_runner_judge_compile_cache_bytes',
      help: 'Bytes of compiled programs the compile cache holds',
      registers,
      collect() {
        this.set(judgeCounters()?.cache.bytes ?? 0)
      }
    })
    void new Counter({
      name: 'sandfleet_runner_judge_compile_cache_evictions_total',
      help: 'Compiled programs the compile cache dropped to stay within judgeCacheBytes',
      registers,
      collect() {
        this.reset()
        this.inc(judgeCounters()?.cache.evictions ?? 0)
      }
    })
    const pools = (): readonly Pool[] => this.#pools
    const gauge = (name: string, help: string, read: (s: ReturnType<Pool['stats']>) => number): void => {
      void new Gauge({
        name,
        help,
        labelNames: ['language', 'backend'],
        registers,
        collect() {
          this.reset()
          for (const pool of pools()) {
            const s = pool.stats()
            this.set({ language: s.language, backend: s.driver }, read(s))
          }
        }
      })
    }
    gauge('sandfleet_runner_sandboxes_warm', 'Sandboxes idle and ready', (s) => s.warm)
    gauge('sandfleet_runner_sandboxes_busy', 'Sandboxes running a job', (s) => s.busy)
    gauge('sandfleet_runner_sandboxes_starting', 'Sandboxes booting (first start or replacement)', (s) => s.starting)
    gauge('sandfleet_runner_pool_size', 'Sandboxes each pool keeps', (s) => s.size)
    gauge('sandfleet_runner_in_flight', 'Jobs running now', (s) => s.busy)
    gauge('sandfleet_runner_queued', 'Jobs waiting for a sandbox', (s) => s.queued)
  }

  /** Attaches the pools whose gauges are reported and binds their label children. */
  attach(pools: readonly Pool[]): void {
    this.#pools = pools
    for (const pool of pools) {
      const labels = { language: pool.language, backend: pool.driver.name }
      const executions = new Map<Status, CounterChild>()
      for (const status of STATUSES) executions.set(status, counterChild(this.#executions, { ...labels, status }))
      this.#bound.set(pool.language, {
        executions,
        duration: histogramChild(this.#duration, labels),
        queueWait: histogramChild(this.#queueWait, labels)
      })
    }
  }

  /** Counts one answered job. */
  record(language: Language, result: ExecResult): void {
    const bound = this.#bound.get(language)
    if (bound === undefined) {
      this.#executions.inc({ status: result.status, language, backend: 'none' })
      return
    }
    bound.executions.get(result.status)?.inc()
    if (result.sandbox !== '') bound.duration.observe(result.duration_ms / 1000)
    bound.queueWait.observe(result.queue_ms / 1000)
  }

  /** Where the judges' counters are read when scraped (the compile cache's). */
  judges(read: () => JudgeCounters): void {
    this.#judgeCounters = read
  }

  /** Counts one answered judge and its tests. */
  judged(result: JudgeResult): void {
    const language = result.language
    this.#judges.inc({ verdict: result.verdict, language })
    const counts = new Map<string, number>()
    for (const t of result.tests) counts.set(t.verdict, (counts.get(t.verdict) ?? 0) + 1)
    for (const [verdict, n] of counts) this.#judgeTests.inc({ verdict, language }, n)
    if (result.sandbox !== '') this.#judgeSeconds.observe({ language }, result.duration_ms / 1000)
  }

  /** Pool event: a replacement is ready. */
  replaced(pool: Pool, reason: ReplaceReason, ms: number): void {
    const labels = { language: pool.language, backend: pool.driver.name }
    this.#replacements.inc({ ...labels, reason })
    this.#replaceSeconds.observe(labels, ms / 1000)
  }

  /** Driver event of the reuse isolation level (bound: drivers call it as a plain function). */
  readonly reuse = (event: ReuseEvent): void => {
    if (event.kind === 'ran') this.#reuseJobs.inc({ level: event.level, refused: event.refused ?? '' })
    else this.#reuseRetirements.inc({ reason: event.reason })
  }

  /** Pool event: a job stalled (answered infra_error: its sandbox, or the runner, stopped answering). */
  stalled(pool: Pool, cause: StallCause): void {
    this.#stalled.inc({ language: pool.language, backend: pool.driver.name, cause })
  }

  /** A retry answered from the run of its request id, `finished` or still `running`. */
  replayed(run: 'finished' | 'running'): void {
    this.#replayed.inc({ run })
  }

  /** Pool event: a sandbox failed to start. */
  startFailed(pool: Pool): void {
    this.#startFailures.inc({ language: pool.language, backend: pool.driver.name })
  }
}
