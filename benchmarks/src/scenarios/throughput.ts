/**
 * The throughput and latency targets against `sandfleet serve`: `print(1+1)` at
 * concurrency 1 (p50) and 64 (calls/s), through the batch endpoint, and `sympy.factor` at 64.
 */
import { availableParallelism } from 'node:os'
import type { LoadReport } from '../load.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { fleetNote, type BenchContext, type Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadBatch, loadExecute, loadHealthz, type Workload } from './workloads.ts'

/**
 * `print(1+1)` at concurrency 1: p50 ≤ 2 ms. Beside it, the part of that time spent in the
 * sandbox (the results' `duration_ms`) and `GET /healthz` at the same concurrency, the HTTP floor.
 */
export const trivialC1: Scenario = {
  summary: 'print(1+1) at concurrency 1 (target: p50 ≤ 2 ms), and GET /healthz beside it (the HTTP floor)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await ctx.fleet()
    const c = ctx.options.concurrency ?? 1
    const report = await loadExecute(ctx, server, TRIVIAL, c)
    const floor = await loadHealthz(ctx, server, c)
    return {
      figures: [
        {
          scenario: 'trivial-c1',
          name: `print(1+1) p50, concurrency ${c}`,
          value: report.latencyMs.p50,
          unit: 'ms',
          target: { op: '<=', value: 2 }
        },
        { scenario: 'trivial-c1', name: `print(1+1) p99, concurrency ${c}`, value: report.latencyMs.p99, unit: 'ms' },
        {
          scenario: 'trivial-c1',
          name: 'of which the run in the sandbox (duration_ms) p50',
          value: report.runMs.p50,
          unit: 'ms'
        },
        {
          scenario: 'trivial-c1',
          name: `HTTP floor: GET /healthz p50, concurrency ${c}`,
          value: floor.latencyMs.p50,
          unit: 'ms'
        }
      ],
      runs: [
        { scenario: 'trivial-c1', server: 'sandfleet', report },
        { scenario: 'trivial-c1 floor', server: 'sandfleet GET /healthz', report: floor }
      ],
      notes: [fleetNote(server)]
    }
  }
}

/**
 * The fleet's CPU per call (its whole process tree), and the calls/s that cost allows when the
 * fleet has every core to itself: a projection for a shared machine, not a measurement. `of`
 * names the run in the figures' names when a scenario reports several (`, batches of 64`).
 */
export function cpuFigures(scenario: string, report: LoadReport, of = ''): Figure[] {
  const ms = report.serverCpuMsPerCall
  if (ms === undefined || ms <= 0) return []
  const cores = availableParallelism()
  return [
    { scenario, name: `fleet CPU per call${of} (user + kernel, whole process tree)`, value: ms, unit: 'ms' },
    {
      scenario,
      name: `projection${of}: calls/s that CPU cost allows on ${cores} idle cores`,
      value: (cores * 1000) / ms,
      unit: 'calls/s'
    }
  ]
}

/**
 * A snippet through `/v1/execute` at concurrency 64 (or `--concurrency`), judged by its ok calls/s
 * against `minCallsPerS`, with the fleet's CPU per call beside it.
 */
function executeThroughput(id: string, workload: Workload, minCallsPerS: number): Scenario {
  return {
    summary: `${workload.name} at concurrency 64 (target: ≥ ${minCallsPerS.toLocaleString('en-US')} calls/s)`,
    async run(ctx: BenchContext): Promise<ScenarioResult> {
      const server = await ctx.fleet()
      const c = ctx.options.concurrency ?? 64
      const report = await loadExecute(ctx, server, workload, c)
      return {
        figures: [
          {
            scenario: id,
            name: `${workload.name} ok calls/s, concurrency ${c}`,
            value: report.okCallsPerS,
            unit: 'calls/s',
            target: { op: '>=', value: minCallsPerS }
          },
          ...cpuFigures(id, report)
        ],
        runs: [{ scenario: id, server: 'sandfleet', report }],
        notes: [fleetNote(server)]
      }
    }
  }
}

/** `print(1+1)` at concurrency 64: ≥ 1,000 calls/s. */
export const trivialC64: Scenario = executeThroughput('trivial-c64', TRIVIAL, 1000)

/** `print(1+1)` in batches of 64 through `/v1/execute/batch`: ≥ 1,200 calls/s. */
export const batch64: Scenario = {
  summary: 'print(1+1) in batches of --batch-size (64), 4 batches in flight (target: ≥ 1,200 calls/s)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await ctx.fleet()
    const c = ctx.options.concurrency ?? 4
    const size = ctx.options.batchSize
    const report = await loadBatch(ctx, server, TRIVIAL, size, c)
    return {
      figures: [
        {
          scenario: 'batch64',
          name: `print(1+1) ok calls/s, batches of ${size}, ${c} in flight`,
          value: report.okCallsPerS,
          unit: 'calls/s',
          target: { op: '>=', value: 1200 }
        },
        ...cpuFigures('batch64', report)
      ],
      runs: [{ scenario: 'batch64', server: 'sandfleet', report }],
      notes: [fleetNote(server)]
    }
  }
}

/** `sympy.factor(x**4-1)` at concurrency 64: ≥ 150 calls/s. */
export const sympyC64: Scenario = executeThroughput('sympy-c64', SYMPY, 150)
