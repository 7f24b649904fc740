/**
 * What a runner says about itself, built from its parts: the load report gateways route by
 * (`GET /v1/runner/load`), what it runs (`GET /v1/info`), and each pool's isolation.
 */
import type { Language, RunnerInfo, RunnerLoad, RunnerState, RuntimeEnvironment } from '@sandfleet/protocol'
import type { Driver, IsolationReport } from '../sandbox/contract.ts'
import { lifeLine } from '../sandbox/retire-reasons.ts'
import type { RunnerConfig } from '../config.ts'
import type { RunnerParts } from './runner-parts.ts'

/** Who is reporting: the runner's id, lifecycle state and configuration. */
export interface Reporter {
  id: string
  state: RunnerState
  config: RunnerConfig
}

/** The backend named in reports: the Python pool's, else the first driver's, else the configured one. */
function backendOf(parts: RunnerParts, config: RunnerConfig): string {
  return parts.pools.get('python')?.driver.name ?? parts.drivers[0]?.name ?? config.backend
}

/**
 * The load report: capacity, in flight, queued and warm, summed over the pools and per language;
 * and how late past `timeout_ms` a job is answered at the latest (a gateway checks that its wait
 * covers it).
 */
export function loadReport(runner: Reporter, parts: RunnerParts): RunnerLoad {
  const load: RunnerLoad = {
    runner: runner.id,
    state: runner.state,
    backend: backendOf(parts, runner.config),
    languages: [...parts.pools.keys()],
    capacity: 0,
    in_flight: 0,
    queued: 0,
    queue_limit: 0,
    warm: 0,
    busy: 0,
    sessions: parts.sessions?.size ?? 0,
    grace_ms: runner.config.graceMs,
    stop_ms: 0,
    pools: {}
  }
  for (const [language, pool] of parts.pools) {
    const s = pool.stats()
    if (load.pools !== undefined)
      load.pools[language] = { capacity: s.size, queued: s.queued, backend: pool.driver.name }
    load.capacity += s.size
    load.in_flight += s.busy
    load.busy += s.busy
    load.queued += s.queued
    load.queue_limit += s.queueLimit
    load.warm += s.warm
    load.stop_ms = Math.max(load.stop_ms ?? 0, pool.driver.stopMs ?? 0)
  }
  return load
}

/** What `driver` protects against, with the line its declared {@link Driver.life} makes. */
export function isolationOf(driver: Driver): IsolationReport {
  const report = driver.describe()
  return driver.life === undefined ? report : { ...report, properties: [...report.properties, lifeLine(driver.life)] }
}

/** The isolation report of every pool, by language. */
export function isolationsOf(parts: RunnerParts): Partial<Record<Language, IsolationReport>> {
  const out: Partial<Record<Language, IsolationReport>> = {}
  for (const [language, pool] of parts.pools) out[language] = isolationOf(pool.driver)
  return out
}

/** What runs a driver's code: its own word, else its manifest's Python under CPython; undefined: it knows neither. */
function environmentOf(driver: Driver): RuntimeEnvironment | undefined {
  const own = driver.environment?.()
  if (own !== undefined) return own
  const manifest = driver.manifest?.()
  return manifest === undefined
    ? undefined
    : { runtime: 'CPython', version: manifest.python, packages: manifest.packages }
}

/**
 * What the runner runs: its backend and why, each pool's isolation and what runs its code, the Python pool's
 * environment manifest.
 */
export function infoReport(runner: Reporter, parts: RunnerParts): RunnerInfo {
  const python = parts.pools.get('python')?.driver
  const isolation: RunnerInfo['isolation'] = {}
  for (const [language, report] of Object.entries(isolationsOf(parts)))
    if (report !== undefined) isolation[language] = report
  const environments: RunnerInfo['environments'] = {}
  for (const [language, pool] of parts.pools) {
    const environment = environmentOf(pool.driver)
    if (environment !== undefined) environments[language] = environment
  }
  return {
    runner: runner.id,
    state: runner.state,
    backend: backendOf(parts, runner.config),
    backend_reason: parts.backendReason,
    languages: [...parts.pools.keys()],
    pool_size: runner.config.poolSize,
    isolation,
    environments,
    manifest: python?.manifest?.() ?? null
  }
}
