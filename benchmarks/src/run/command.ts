/**
 * `sandfleet bench step|closed|open [flags]`: one product run. It starts the fleet (one
 * `sandfleet serve`, or a gateway and `--runner-processes` runners; or `--url` to any fleet or a
 * peer service speaking the target's API), sends the workload in the mode asked, shows progress,
 * checks every answer, and writes the report as JSON, Markdown and HTML. The exit code is 1 when a
 * threshold failed.
 */
import { existsSync, writeFileSync } from 'node:fs'
import { GRACES, timeoutMsOf } from '@sandfleet/protocol'
import { statusMiB } from '../proc-memory.ts'
import type { Environment } from '../environment.ts'
import { existingServer, startServe, startSplitFleet, type Server } from '../fleet.ts'
import type { BenchOptions } from '../options.ts'
import { describeWorkload, drawCalls, type BenchCall } from '../workloads/calls.ts'
import { runPlan, type Sample } from './engine.ts'
import { healthFigures, settleTo, steadyState, watchHealth, type SoakHealth } from './health.ts'
import { htmlReport } from './html-report.ts'
import { progressReporter } from './progress.ts'
import { buildReport, markdownReport, type ProcessPeak, type ProductReport } from './run-report.ts'
import { TARGET_TABLE } from './targets.ts'
import { parseThreshold } from './thresholds.ts'
import { countersMoved, reuseCounters } from './reuse-counters.ts'
import { settle } from '../cpu.ts'
import { startFleetCpuMeter, type FleetCpuMeter } from '../fleet-cpu.ts'
import { runCpu } from './efficiency.ts'
import { replacementCounters, replacementsMoved } from './replacement-counters.ts'

/** A soak's verdict when no --threshold is given: issue 18's bar. */
export const SOAK_THRESHOLDS = [
  'wrong==0',
  'lost==0',
  'duplicated==0',
  'misrouted==0',
  'rss_growth_pct<=10',
  'fd_growth<=8',
  'zombies==0',
  'leaked_sandboxes==0'
]

/** The realistic RL step's verdict when no --threshold is given: every call answered, once, right. */
export const RL_STEP_THRESHOLDS = ['wrong==0', 'lost==0', 'duplicated==0', 'misrouted==0']

/** The modes of a product run. */
export const MODES = {
  step: 'N calls released at once (--calls, --batch-size for a batched --target, over --connections)',
  closed: 'closed loop: --concurrency requests in flight for --duration s',
  open: "open loop: --rate calls/s for --duration s; latency from each call's scheduled send time",
  soak: '--calls through one runner process (--connections in flight), its processes watched: RSS and descriptor growth, zombies, leaked sandboxes (with --workload rl-hostile: 5 % hostile calls)'
} as const

/** A mode's name. */
export type Mode = keyof typeof MODES

async function startFleet(options: BenchOptions, log: (line: string) => void): Promise<Server> {
  const { run } = options
  if (options.url !== undefined) return existingServer(options.url)
  const pool = options.poolSize === undefined ? [] : ['--pool-size', String(options.poolSize)]
  if (run.runnerProcesses > 0) {
    log(`starting sandfleet gateway and ${run.runnerProcesses} sandfleet runner processes`)
    return await startSplitFleet(
      run.runnerProcesses,
      ['--backend', options.backend, ...pool, ...run.runnerArgs],
      run.gatewayArgs,
      undefined,
      run.port
    )
  }
  const args = ['--backend', options.backend, ...pool, ...run.gatewayArgs, ...run.runnerArgs]
  log(`starting sandfleet serve ${args.join(' ')}`)
  return await startServe(args, undefined, run.port)
}

/** The reports' extensions. */
const REPORT_FILES = ['json', 'md', 'html'] as const

/**
 * `prefix`, or the first of `prefix-2`, `prefix-3`, … whose reports do not exist: a run never overwrites an earlier
 * run's reports.
 */
export function unusedReportPrefix(prefix: string, exists: (path: string) => boolean = existsSync): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? prefix : `${prefix}-${n}`
    if (REPORT_FILES.every((ext) => !exists(`${candidate}.${ext}`))) return candidate
  }
}

/**
 * Runs one product run (`track` sees the fleet it starts, to stop it on a signal); returns the report and the exit code
 * (1 when a threshold failed).
 */
export async function runProduct(
  mode: Mode,
  options: BenchOptions,
  environment: Environment,
  log: (line: string) => void,
  track: (server: Server) => void = () => {}
): Promise<{ report: ProductReport; code: number }> {
  const { run } = options
  const target = TARGET_TABLE[run.target]
  const spec = {
    name: run.workload,
    seed: run.seed,
    sleepS: run.sleepS,
    hostileShare: run.hostileShare,
    step: run.step,
    ...(run.file === undefined ? {} : { file: run.file })
  }
  const soak = mode === 'soak'
  const connections =
    mode === 'closed' || soak
      ? (options.concurrency ?? options.connections ?? (soak ? 16 : 64))
      : (options.connections ?? 64)
  const pool = drawCalls(spec, mode === 'step' || soak ? run.calls : 10_000)
  if (soak && options.url !== undefined)
    throw new Error('soak watches the processes of the fleet it starts: drop --url')
  // Chosen before the run: what it writes is said at its start, and a second run beside the first keeps both.
  const out = unusedReportPrefix(run.out)
  if (out !== run.out) log(`${run.out}.* hold an earlier run's reports: this run's go to ${out}.*`)
  const server = await startFleet(soak ? { ...options, run: { ...run, runnerProcesses: 1 } } : options, log)
  track(server)
  try {
    const watch = soak
      ? await startWatch(server, options.backend === 'docker', run.calls, longestJobS(pool), log)
      : undefined
    // An existing fleet's description is its URL already; a fleet started here is told where it listens.
    log(`  ${options.url !== undefined ? server.description : `${server.description} at ${server.url}`}`)
    const tty = run.progress === 'tty' || (run.progress === 'auto' && process.stderr.isTTY)
    const progress =
      run.progress === 'none'
        ? undefined
        : progressReporter(
            { write: (t) => process.stderr.write(t), isTTY: tty },
            mode === 'step' || soak ? run.calls : undefined
          )
    const durationS = options.durationS
    // A fleet just started warms its tiers in the background: the run's CPU is measured from when it is idle.
    if (options.url === undefined && !soak) for (const p of server.processes ?? []) await settle(p.pid)
    const counted = await reuseCounters(server.url)
    const metricsAt = server.runnerUrls ?? [server.url]
    const replacedBefore = await replacementCounters(metricsAt)
    const cpuMeter = await fleetCpuMeter(server, options.backend === 'docker')
    const onSample = (sample: Sample): void => {
      progress?.sample(sample)
    }
    const result = await runPlan({
      mode: soak ? 'closed' : mode,
      url: server.url,
      target,
      callAt: (n) => pool[n % pool.length],
      calls: run.calls,
      batchSize: options.batchSize,
      connections,
      rate: run.rate,
      durationS: soak ? Infinity : durationS,
      callLimit: soak,
      sampleMs: tty ? 250 : soak ? 2000 : Math.max(250, Math.min(2000, durationS * 5)),
      requestTimeoutMs: run.requestTimeoutS * 1000,
      onSample,
      ...(watch === undefined ? {} : { onAnswer: watch.answered })
    })
    progress?.end()
    const fleetCpu =
      cpuMeter === undefined ? 'the fleet is not one this harness started (--url)' : await cpuMeter.stop()
    const replacedAfter = await replacementCounters(metricsAt)
    const reuse = countersMoved(counted, await reuseCounters(server.url))
    const health = await watch?.finish()
    const memory: ProcessPeak[] = (server.processes ?? []).flatMap((p) => {
      const peak = statusMiB(p.pid, 'VmHWM')
      return peak === undefined ? [] : [{ name: p.name, pid: p.pid, peakRssMiB: peak }]
    })
    const report = buildReport(
      environment,
      {
        mode,
        target: target.name,
        path: target.path,
        workload: describeWorkload(spec),
        fleet: server.description,
        connections,
        ...(target.batched ? { batchSize: options.batchSize } : {}),
        ...(mode === 'step' || soak ? { calls: run.calls } : { durationS }),
        ...(mode === 'open' ? { rate: run.rate } : {})
      },
      result,
      memory,
      run.thresholds.length > 0
        ? run.thresholds
        : soak
          ? SOAK_THRESHOLDS.map(parseThreshold)
          : run.workload === 'rl-step'
            ? RL_STEP_THRESHOLDS.map(parseThreshold)
            : [],
      health,
      {
        cpu: runCpu(result.callCpuMs, result.measuredCalls, fleetCpu),
        ...(replacedBefore === undefined || replacedAfter === undefined
          ? {}
          : { replacements: replacementsMoved(replacedBefore, replacedAfter) })
      }
    )
    if (reuse !== 'none') report.reuse = reuse
    writeFileSync(`${out}.json`, JSON.stringify(report, null, 2) + '\n')
    writeFileSync(`${out}.md`, markdownReport(report))
    writeFileSync(`${out}.html`, htmlReport(report))
    log(`reports: ${out}.json, ${out}.md, ${out}.html`)
    return { report, code: report.thresholds.every((t) => t.passed) ? 0 : 1 }
  } finally {
    await server.close()
  }
}

/**
 * Starts measuring the CPU of the fleet the harness started: its processes' trees and, on the
 * docker backend, the containers of its runners (their ids from the gateway's /readyz); undefined
 * for a fleet it did not start.
 */
async function fleetCpuMeter(server: Server, docker: boolean): Promise<FleetCpuMeter | undefined> {
  const pids = (server.processes ?? []).map((p) => p.pid)
  if (pids.length === 0) return undefined
  let runners: string[] = []
  if (docker) {
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { runners?: Array<{ runner?: string }> }
    runners = (ready.runners ?? []).flatMap((r) => (typeof r.runner === 'string' ? [r.runner] : []))
  }
  return startFleetCpuMeter({ pids, containersOf: runners })
}

/** Seconds the longest of `calls` may last in its sandbox: its `timeout_ms` and the runner's grace. */
function longestJobS(calls: readonly BenchCall[]): number {
  return calls.reduce((most, c) => Math.max(most, c.timeoutMs ?? timeoutMsOf({})), 0) / 1000 + GRACES.sandboxMs / 1000
}

/**
 * Starts watching a soak's fleet (a gateway and one runner process) through a run of `calls`: its
 * state at rest before the run, then samples by time and by progress (`answered`, told each
 * answer); `finish` waits for the runner to be at rest again and measures.
 */
async function startWatch(
  server: Server,
  docker: boolean,
  calls: number,
  leftAfterS: number,
  log: (line: string) => void
): Promise<{ answered: (done: number) => void; finish: () => Promise<SoakHealth> }> {
  const runnerPid = server.processes?.find((p) => p.name.startsWith('runner'))?.pid
  const gatewayPid = server.processes?.find((p) => p.name === 'gateway')?.pid
  if (runnerPid === undefined || gatewayPid === undefined)
    throw new Error('soak: the fleet started has no runner or gateway process')
  let runnerId: string | undefined
  if (docker) {
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { runners?: Array<{ runner?: string }> }
    runnerId = ready.runners?.[0]?.runner
  }
  const before = await steadyState(runnerPid, runnerId)
  log(`soak: the runner at rest: ${before.processes} processes${docker ? `, ${before.containers} containers` : ''}`)
  const watcher = watchHealth(runnerPid, gatewayPid, calls)
  return {
    answered: watcher.answered,
    finish: async () => {
      const { samples, lingering } = watcher.stop()
      const after = await settleTo(before, runnerPid, runnerId)
      return {
        figures: healthFigures(samples, calls, lingering, leftAfterS, before, after),
        before,
        after,
        samples,
        lingering
      }
    }
  }
}
