/**
 * The gateway's Prometheus metrics, on its own prom-client Registry (merged with the runner's in
 * `sandfleet serve`). Counted from the router's results, never from log lines, through label
 * children made once per label set (`@sandfleet/metrics`): a batch counts every item, and no item
 * pays for label validation or hashing. HTTP requests are counted by route template (never the
 * raw URL), method and status code ({@link GatewayMetrics.observeRequest}); the registry also holds
 * the process's build info and default process/Node.js metrics.
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
import gatewayPackage from '../package.json' with { type: 'json' }
import type { ExecRequest, ExecResult, JudgeRequest, JudgeResult } from '@sandfleet/protocol'
import type { QuotaReason, TenantQuota } from './tenants/tenant-quota.ts'
import type { RunnerMember, RunnerSet } from './runners/runner-set.ts'

/** What the admission gauges read, at scrape time (`pipeline/admission.ts`'s Admission). */
export interface AdmissionGauges {
  /** Calls held now. */
  readonly inFlight: number
  /** Calls held at most. */
  readonly limit: number
  /** Memory the calls held weigh. */
  readonly bytes: number
  /** Memory the calls held may weigh. */
  readonly memoryBytes: number
}

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** The children of one language's series, made on its first result. */
interface LanguageChildren {
  runDuration: HistogramChild
  queueWait: HistogramChild
  /** Executions by backend, then status. */
  executions: Map<string, Map<string, CounterChild>>
}

/** The children of one route and method: the duration, and the count by status code. */
interface RouteChildren {
  duration: HistogramChild
  byStatus: Map<number, CounterChild>
}

/** The route label of a request that matched no route (its URL is never a label). */
export const UNMATCHED_ROUTE = 'unmatched'

/** Options of {@link GatewayMetrics}. */
export interface GatewayMetricsOptions {
  /** The role `sandfleet_build_info` names (default `gateway`; `sandfleet serve` says `serve`). */
  component?: string
}

/** The metrics one gateway exports. */
export class GatewayMetrics {
  readonly registry = new Registry()
  readonly executions: Counter<'status' | 'language' | 'backend'>
  readonly runDuration: Histogram<'language'>
  readonly queueWait: Histogram<'language'>
  readonly retries: Counter<'status'>
  readonly judges: Counter<'verdict' | 'language' | 'backend'>
  readonly judgeTests: Counter<'verdict' | 'language'>
  readonly rejected: Counter<'reason'>
  readonly inFlight: Gauge
  readonly httpRequests: Counter<'route' | 'method' | 'status_code'>
  readonly httpDuration: Histogram<'route' | 'method'>
  readonly tenantCalls: Counter<'tenant'>
  readonly tenantRejected: Counter<'tenant' | 'reason'>
  /** Read by the in-flight gauge at scrape time. */
  inFlightNow: () => number = () => 0
  /** Read by the admission gauges at scrape time ({@link watchAdmission}). */
  #admission: AdmissionGauges | undefined
  /** Read by the tenant in-flight gauge at scrape time ({@link watchTenants}). */
  #tenants: ReadonlyMap<string, TenantQuota> = new Map()
  readonly #children = new Map<string, LanguageChildren>()
  /** Route template → method → its children. */
  readonly #routes = new Map<string, Map<string, RouteChildren>>()
  /** `verdict language backend` → its judge counter child; `verdict language` → its test counter child. */
  readonly #judgeChildren = new Map<string, CounterChild>()
  readonly #testChildren = new Map<string, CounterChild>()

  constructor(set: RunnerSet, options: GatewayMetricsOptions = {}) {
    const registers = [this.registry]
    registerProcessMetrics(this.registry, {
      component: options.component ?? 'gateway',
      version: gatewayPackage.version,
      commit: buildCommit(fileURLToPath(import.meta.url))
    })
    this.httpRequests = new Counter({
      name: 'sandfleet_gateway_http_requests_total',
      help: 'HTTP requests answered, by route template, method and status code (route "unmatched": no route)',
      labelNames: ['route', 'method', 'status_code'] as const,
      registers
    })
    this.httpDuration = new Histogram({
      name: 'sandfleet_gateway_http_request_duration_seconds',
      help: "Time from a request's arrival to the end of its response (a stream: its last line), by route template and method",
      labelNames: ['route', 'method'] as const,
      buckets: SECONDS,
      registers
    })
    this.executions = new Counter({
      name: 'sandfleet_gateway_executions_total',
      help: 'Runner answers by status, language and backend (each attempt of a retried call counts)',
      labelNames: ['status', 'language', 'backend'] as const,
      registers
    })
    this.runDuration = new Histogram({
      name: 'sandfleet_gateway_run_duration_seconds',
      help: 'Run time of the code (duration_ms of results)',
      labelNames: ['language'] as const,
      buckets: SECONDS,
      registers
    })
    this.queueWait = new Histogram({
      name: 'sandfleet_gateway_queue_wait_seconds',
      help: 'Time calls waited for a sandbox on the runner (queue_ms of results)',
      labelNames: ['language'] as const,
      buckets: SECONDS,
      registers
    })
    this.retries = new Counter({
      name: 'sandfleet_gateway_retries_total',
      help: 'Attempts on another runner after an infrastructure failure, by the status the retry got',
      labelNames: ['status'] as const,
      registers
    })
    this.judges = new Counter({
      name: 'sandfleet_gateway_judges_total',
      help: 'Runner answers to judges by verdict, language and backend (each attempt of a retried judge counts)',
      labelNames: ['verdict', 'language', 'backend'] as const,
      registers
    })
    this.judgeTests = new Counter({
      name: 'sandfleet_gateway_judge_tests_total',
      help: 'Tests of judged programs by their verdict (skipped: not run, an earlier test failed) and language',
      labelNames: ['verdict', 'language'] as const,
      registers
    })
    this.rejected = new Counter({
      name: 'sandfleet_gateway_rejected_total',
      help: 'Requests answered with an error body, by reason (SF_ERR_GATEWAY_… code)',
      labelNames: ['reason'] as const,
      registers
    })
    // prom-client calls `collect` with the metric as `this`; the gauges read the metrics object through `self`.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this
    this.inFlight = new Gauge({
      name: 'sandfleet_gateway_in_flight',
      help: 'Calls admitted and not yet answered (a batch counts its items)',
      registers,
      collect() {
        this.set(self.inFlightNow())
      }
    })
    // Tenant series are labelled with the configured names only (made at start, bounded).
    this.tenantCalls = new Counter({
      name: 'sandfleet_gateway_tenant_calls_total',
      help: "Calls each API key's tenant was admitted (a batch counts its items), by tenant name",
      labelNames: ['tenant'] as const,
      registers
    })
    this.tenantRejected = new Counter({
      name: 'sandfleet_gateway_tenant_rejected_total',
      help: "Requests refused 429 by a tenant's own quota, by tenant name and reason (in_flight, rate)",
      labelNames: ['tenant', 'reason'] as const,
      registers
    })
    new Gauge({
      name: 'sandfleet_gateway_tenant_in_flight',
      help: 'Calls each tenant holds now (a batch counts its items)',
      labelNames: ['tenant'] as const,
      registers,
      collect() {
        for (const [tenant, quota] of self.#tenants) this.set({ tenant }, quota.inFlight)
      }
    })
    const admissionGauge = (name: string, help: string, read: (a: AdmissionGauges) => number): void => {
      void new Gauge({
        name,
        help,
        registers,
        collect() {
          if (self.#admission !== undefined) this.set(read(self.#admission))
        }
      })
    }
    admissionGauge(
      'sandfleet_gateway_admission_limit',
      'Calls admission holds at most (maxInFlight, or what admissionMemoryMb holds)',
      (a) => a.limit
    )
    admissionGauge(
      'sandfleet_gateway_admitted_bytes',
      "Memory the calls held weigh by admission's count (32 KiB a call plus its request body)",
      (a) => a.bytes
    )
    admissionGauge(
      'sandfleet_gateway_admission_limit_bytes',
      'Memory the calls held may weigh (admissionMemoryMb); past it 429',
      (a) => a.memoryBytes
    )
    new Gauge({
      name: 'sandfleet_gateway_runner_sandboxes',
      help: 'Sandboxes of each runner by state, from its last load report',
      labelNames: ['runner', 'state'] as const,
      registers,
      collect() {
        this.reset()
        for (const m of set.members) {
          if (m.load === null) continue
          this.set({ runner: m.id, state: 'warm' }, m.load.warm)
          this.set({ runner: m.id, state: 'busy' }, m.load.busy)
        }
      }
    })
    new Gauge({
      name: 'sandfleet_gateway_runner_load',
      help: "Each runner's (in flight + queued) / capacity as this gateway estimates it",
      labelNames: ['runner'] as const,
      registers,
      collect() {
        this.reset()
        for (const m of set.members) this.set({ runner: m.id }, m.score())
      }
    })
    new Gauge({
      name: 'sandfleet_gateway_runners_up',
      help: 'Runners that answered their last load poll',
      registers,
      collect() {
        this.set(set.members.filter((m) => m.up).length)
      }
    })
  }

  /** Router observer: counts one runner answer. */
  readonly record = (
    result: ExecResult,
    request: ExecRequest,
    member: RunnerMember | undefined,
    attempt: number
  ): void => {
    const language = request.language ?? 'python'
    const children = this.#childrenOf(language)
    // The backend of the pool that ran it (a JavaScript call's is javascript, whatever runs the Python pool).
    const backend = member?.load?.pools?.[language]?.backend ?? member?.load?.backend ?? 'none'
    let byStatus = children.executions.get(backend)
    if (byStatus === undefined) children.executions.set(backend, (byStatus = new Map()))
    let executions = byStatus.get(result.status)
    if (executions === undefined)
      byStatus.set(
        result.status,
        (executions = counterChild(this.executions, { status: result.status, language, backend }))
      )
    executions.inc()
    if (attempt > 1) this.retries.inc({ status: result.status })
    if (result.runner !== '') {
      children.runDuration.observe(result.duration_ms / 1000)
      children.queueWait.observe(result.queue_ms / 1000)
    }
  }

  /** Router observer of judges: counts one runner answer by its verdict, and its tests by theirs. */
  readonly recordJudge = (
    result: JudgeResult,
    request: JudgeRequest,
    member: RunnerMember | undefined,
    attempt: number
  ): void => {
    const language = result.language !== '' ? result.language : (request.language ?? 'python')
    const backend = member?.load?.backend ?? 'none'
    const key = `${result.verdict} ${language} ${backend}`
    let judges = this.#judgeChildren.get(key)
    if (judges === undefined)
      this.#judgeChildren.set(key, (judges = counterChild(this.judges, { verdict: result.verdict, language, backend })))
    judges.inc()
    if (attempt > 1) this.retries.inc({ status: result.verdict })
    for (const test of result.tests) {
      const testKey = `${test.verdict} ${language}`
      let tests = this.#testChildren.get(testKey)
      if (tests === undefined)
        this.#testChildren.set(testKey, (tests = counterChild(this.judgeTests, { verdict: test.verdict, language })))
      tests.inc()
    }
  }

  /** Reports `admission`'s in-flight count, limits and weight when scraped. */
  watchAdmission(admission: AdmissionGauges): void {
    this.#admission = admission
    this.inFlightNow = () => admission.inFlight
  }

  /** The counter children of tenant `name`, its series made at zero. */
  tenantChildren(name: string): { calls: CounterChild; rejected: Record<QuotaReason, CounterChild> } {
    this.tenantCalls.inc({ tenant: name }, 0)
    for (const reason of ['in_flight', 'rate'] as const) this.tenantRejected.inc({ tenant: name, reason }, 0)
    return {
      calls: counterChild(this.tenantCalls, { tenant: name }),
      rejected: {
        in_flight: counterChild(this.tenantRejected, { tenant: name, reason: 'in_flight' }),
        rate: counterChild(this.tenantRejected, { tenant: name, reason: 'rate' })
      }
    }
  }

  /** Reports each tenant's calls in flight when scraped. */
  watchTenants(quotas: ReadonlyMap<string, TenantQuota>): void {
    this.#tenants = quotas
  }

  /** Counts one answered HTTP request; `route` is the route template (or {@link UNMATCHED_ROUTE}). */
  observeRequest(route: string, method: string, statusCode: number, seconds: number): void {
    let byMethod = this.#routes.get(route)
    if (byMethod === undefined) this.#routes.set(route, (byMethod = new Map()))
    let children = byMethod.get(method)
    if (children === undefined)
      byMethod.set(
        method,
        (children = { duration: histogramChild(this.httpDuration, { route, method }), byStatus: new Map() })
      )
    let requests = children.byStatus.get(statusCode)
    if (requests === undefined)
      children.byStatus.set(
        statusCode,
        (requests = counterChild(this.httpRequests, { route, method, status_code: String(statusCode) }))
      )
    requests.inc()
    children.duration.observe(seconds)
  }

  #childrenOf(language: string): LanguageChildren {
    let children = this.#children.get(language)
    if (children === undefined) {
      children = {
        runDuration: histogramChild(this.runDuration, { language }),
        queueWait: histogramChild(this.queueWait, { language }),
        executions: new Map()
      }
      this.#children.set(language, children)
    }
    return children
  }
}
