/**
 * `sandfleet bench step|closed|open [flags]`: one product run. It starts the fleet (one
 * `sandfleet serve`, or a gateway and `--runner-processes` runners; or `--url` to any fleet or a
 * peer service speaking the target's API), sends the workload in the mode asked, shows progress,
 * checks every answer, and writes the report as JSON, Markdown and HTML. The exit code is 1 when a
 * threshold failed.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import type { Environment } from '../environment.ts'
import { existingServer, startServe, startSplitFleet, type Server } from '../fleet.ts'
import type { BenchOptions } from '../options.ts'
import { describeWorkload, drawCalls } from '../workloads/calls.ts'
import { runPlan } from './engine.ts'
import { htmlReport } from './html-report.ts'
import { progressReporter } from './progress.ts'
import { buildReport, markdownReport, type ProcessPeak, type ProductReport } from './run-report.ts'
import { TARGET_TABLE } from './targets.ts'

/** The modes of a product run. */
export const MODES = {
  step: 'N calls released at once (--calls, --batch-size for a batched --target, over --connections)',
  closed: 'closed loop: --concurrency requests in flight for --duration s',
  open: 'open loop: --rate calls/s for --duration s; latency from each call\'s scheduled send time'
} as const

/** A mode's name. */
export type Mode = keyof typeof MODES

/** The kernel's peak RSS of a process (VmHWM), MiB; undefined when it is gone. */
export function peakRssMiB (pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? undefined : Number(m[1]) / 1024
  } catch { return undefined }
}

async function startFleet (options: BenchOptions, log: (line: string) => void): Promise<Server> {
  const { run } = options
  if (options.url !== undefined) return existingServer(options.url)
  const pool = options.poolSize === undefined ? [] : ['--pool-size', String(options.poolSize)]
  if (run.runnerProcesses > 0) {
    log(`starting sandfleet gateway and ${run.runnerProcesses} sandfleet runner processes`)
    return await startSplitFleet(run.runnerProcesses, ['--backend', options.backend, ...pool, ...run.runnerArgs], run.gatewayArgs)
  }
  const args = ['--backend', options.backend, ...pool, ...run.gatewayArgs, ...run.runnerArgs]
  log(`starting sandfleet serve ${args.join(' ')}`)
  return await startServe(args)
}

/** Runs one product run (`track` sees the fleet it starts, to stop it on a signal); returns the report and the exit code (1 when a threshold failed). */
export async function runProduct (mode: Mode, options: BenchOptions, environment: Environment, log: (line: string) => void, track: (server: Server) => void = () => {}): Promise<{ report: ProductReport, code: number }> {
  const { run } = options
  const target = TARGET_TABLE[run.target]
  const spec = { name: run.workload, seed: run.seed, sleepS: run.sleepS, ...(run.file === undefined ? {} : { file: run.file }) }
  const connections = mode === 'closed' ? options.concurrency ?? options.connections ?? 64 : options.connections ?? 64
  const pool = drawCalls(spec, mode === 'step' ? run.calls : 10_000)
  const server = await startFleet(options, log)
  track(server)
  try {
    log(`  ${server.description} at ${server.url}`)
    const tty = run.progress === 'tty' || (run.progress === 'auto' && process.stderr.isTTY)
    const progress = run.progress === 'none' ? undefined : progressReporter({ write: (t) => process.stderr.write(t), isTTY: tty }, mode === 'step' ? run.calls : undefined)
    const durationS = options.durationS
    const result = await runPlan({
      mode,
      url: server.url,
      target,
      callAt: (n) => pool[n % pool.length],
      calls: run.calls,
      batchSize: options.batchSize,
      connections,
      rate: run.rate,
      durationS,
      sampleMs: tty ? 250 : Math.max(250, Math.min(2000, durationS * 5)),
      requestTimeoutMs: run.requestTimeoutS * 1000,
      ...(progress === undefined ? {} : { onSample: progress.sample })
    })
    progress?.end()
    const memory: ProcessPeak[] = (server.processes ?? []).flatMap((p) => {
      const peak = peakRssMiB(p.pid)
      return peak === undefined ? [] : [{ name: p.name, pid: p.pid, peakRssMiB: peak }]
    })
    const report = buildReport(environment, {
      mode,
      target: target.name,
      path: target.path,
      workload: describeWorkload(spec),
      fleet: server.description,
      connections,
      ...(target.batched ? { batchSize: options.batchSize } : {}),
      ...(mode === 'step' ? { calls: run.calls } : { durationS }),
      ...(mode === 'open' ? { rate: run.rate } : {})
    }, result, memory, run.thresholds)
    writeFileSync(`${run.out}.json`, JSON.stringify(report, null, 2) + '\n')
    writeFileSync(`${run.out}.md`, markdownReport(report))
    writeFileSync(`${run.out}.html`, htmlReport(report))
    log(`reports: ${run.out}.json, ${run.out}.md, ${run.out}.html`)
    return { report, code: report.thresholds.every((t) => t.passed) ? 0 : 1 }
  } finally {
    await server.close()
  }
}
