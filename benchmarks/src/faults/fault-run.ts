/**
 * One fault under load: numbered calls go through every gateway in turn (`callLoad`, each answer
 * checked) while a fault is done to one runner and undone; then every call answered
 * `maybe_ran: true`, or not answered at all (its gateway died), is retried once, the same request
 * under the same `request_id`, through another gateway that lives, naming the runner that had it
 * (`x-sandfleet-runner`) when the answer said, as a client told to retry what may have run does.
 * The runners' count of runs that ended `ok` (`sandfleet_runner_executions_total{status="ok"}`),
 * before and after, says whether any call ran twice: the load's code always ends `ok`.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { callLoad, gatewayRetries, type CallRecord } from '../docker-fleet/call-load.ts'
import type { FaultFleet } from './process-fleet.ts'

/** Options of {@link runFault}. */
export interface FaultRunOptions {
  /** Calls in flight at once. */
  concurrency: number
  /** Python run before each call's answer (its run time). */
  prelude: string
  /** Each call's `timeout_ms`. */
  timeoutMs: number
  /** Load before the fault, during it, and after it is undone, ms. */
  beforeMs: number
  faultMs: number
  afterMs: number
  /** Does the fault; resolves when it is done. */
  fault: () => Promise<void> | void
  /** Undoes it (none: a kill, which is not undone). */
  undo?: () => Promise<void> | void
  /** Waits for the fleet to have every runner that is still alive back, after the undo. */
  recovered?: () => Promise<void>
}

/** What one fault run saw. */
export interface FaultRun {
  records: CallRecord[]
  /** `performance.now()` when the fault was done, and undone. */
  faultAt: number
  undoneAt: number | undefined
  /** The retries of the answers that may have run, by request id. */
  retries: Map<string, CallRecord>
  /**
   * Runs that ended `ok` on the runners during the load and the retries; undefined when a runner died meanwhile (its
   * runs died with it, uncounted).
   */
  okRuns: number | undefined
  /** Attempts the gateways made again on another runner during the load (`sandfleet_gateway_retries_total`). */
  gatewayRetries: number
}

/** The runs that ended `ok` on each runner at `urls` (`sandfleet_runner_executions_total`), by URL. */
export async function okRuns(urls: readonly string[]): Promise<Map<string, number>> {
  const runs = new Map<string, number>()
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text()
    let sum = 0
    for (const m of text.matchAll(/^sandfleet_runner_executions_total\{([^}]*)\} (\d+(?:\.\d+)?)$/gm))
      if (/status="ok"/.test(m[1])) sum += Number(m[2])
    runs.set(url, sum)
  }
  return runs
}

/** Runs the load, the fault and the retries; see the module comment. */
export async function runFault(fleet: FaultFleet, options: FaultRunOptions): Promise<FaultRun> {
  const gateways = fleet.gateways.map((g) => g.url)
  const exited = (p: { child: { exitCode: number | null; signalCode: string | null } }): boolean =>
    p.child.exitCode !== null || p.child.signalCode !== null
  const alive = (): string[] =>
    fleet.runners.filter((r) => r.child.exitCode === null && r.child.signalCode === null).map((r) => r.url)
  const before = await okRuns(alive())
  const retriedBefore = new Map(
    await Promise.all(gateways.map(async (url) => [url, await gatewayRetries(url)] as const))
  )
  let stop = false
  const load = callLoad({
    gateways,
    concurrency: options.concurrency,
    prelude: options.prelude,
    timeoutMs: options.timeoutMs,
    stop: () => stop
  })
  await sleep(options.beforeMs)
  const faultAt = performance.now()
  await options.fault()
  await sleep(options.faultMs)
  let undoneAt: number | undefined
  if (options.undo !== undefined) {
    await options.undo()
    undoneAt = performance.now()
  }
  await options.recovered?.()
  await sleep(options.afterMs)
  stop = true
  const records = await load
  let retriedDuring = 0
  for (const g of fleet.gateways.filter((p) => !exited(p)))
    retriedDuring += (await gatewayRetries(g.url)) - (retriedBefore.get(g.url) ?? 0)
  const retries = new Map<string, CallRecord>()
  const living = fleet.gateways.filter((g) => !exited(g)).map((g) => g.url)
  await Promise.all(
    records
      .filter((r) => r.maybeRan === true || r.status === 'no_answer')
      .map(async (r) => {
        const gateway = living.find((url) => url !== gateways[r.index % gateways.length]) ?? living[0]
        const sentAt = performance.now()
        const res = await fetch(`${gateway}/v1/execute`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(r.runner === '' ? {} : { 'x-sandfleet-runner': r.runner })
          },
          body: JSON.stringify({ code: r.code, request_id: r.requestId, timeout_ms: options.timeoutMs })
        })
        const body = (await res.json()) as {
          status: string
          stdout: string
          runner?: string
          error?: { type?: string } | null
          maybe_ran?: boolean
          replayed?: boolean
        }
        retries.set(r.requestId, {
          ...r,
          sentAt,
          latencyMs: performance.now() - sentAt,
          httpStatus: res.status,
          status: body.status,
          correct: body.status === 'ok',
          runner: body.runner ?? '',
          error: body.error,
          ...(typeof body.error?.type === 'string' ? { type: body.error.type } : {}),
          ...(body.maybe_ran === undefined ? {} : { maybeRan: body.maybe_ran }),
          ...(body.replayed === undefined ? {} : { replayed: body.replayed })
        })
      })
  )
  const after = await okRuns(alive())
  let ran: number | undefined = 0
  for (const [url, runs] of before)
    ran = after.has(url) && ran !== undefined ? ran + (after.get(url) as number) - runs : undefined
  return { records, faultAt, undoneAt, retries, okRuns: ran, gatewayRetries: retriedDuring }
}
