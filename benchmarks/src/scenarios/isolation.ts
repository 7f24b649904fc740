/**
 * Issue 29's figures: the `reuse` isolation level side by side with `fork`, on one fleet (each call
 * names its level, so both run on the same sandboxes), taking turns for `ROUNDS` rounds: trivial
 * and sympy calls/s at concurrency 64, trivial p50 at concurrency 1. The ratios are medians of the
 * rounds (this machine's pace moves within minutes); the reuse level's own counters (jobs by the
 * level they ran at, retirements by reason) are read from the fleet's /metrics around the runs.
 */
import { emptyResult, type ScenarioResult } from '../report.ts'
import { median } from '../stats.ts'
import type { BenchContext, Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadExecute, type Workload } from './workloads.ts'
import { countersMoved, reuseCounters } from '../run/reuse-counters.ts'

const ROUNDS = 3

export const isolationBench: Scenario = {
  summary: `reuse beside fork on one fleet, ${ROUNDS} rounds taking turns: print(1+1) and sympy.factor calls/s at concurrency 64 (targets: reuse ≥ 3× and ≥ 2× fork), print(1+1) p50 at concurrency 1 (target ≤ 1 ms)`,
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const { figures, runs, notes } = emptyResult()
    const fleet = await ctx.fleet()
    const c = ctx.options.concurrency ?? 64
    const at = (w: Workload, isolation: 'fork' | 'reuse'): Workload => ({ ...w, isolation })
    for (const [workload, target] of [
      [TRIVIAL, 3],
      [SYMPY, 2]
    ] as const) {
      const ratios: number[] = []
      const rates = { fork: [] as number[], reuse: [] as number[] }
      const shares = { fork: [] as number[], reuse: [] as number[] }
      const before = await reuseCounters(fleet.url)
      for (let round = 1; round <= ROUNDS; round++) {
        ctx.log(`  ${workload.name}, round ${round} of ${ROUNDS}`)
        // Taking turns, the first level changes each round.
        const order = round % 2 === 1 ? (['fork', 'reuse'] as const) : (['reuse', 'fork'] as const)
        const got: Record<string, number> = {}
        for (const level of order) {
          const report = await loadExecute(ctx, fleet, at(workload, level), c)
          got[level] = report.okCallsPerS
          rates[level].push(report.okCallsPerS)
          if (report.usefulShare !== undefined) shares[level].push(report.usefulShare * 100)
          runs.push({
            scenario: `isolation ${round}`,
            workload: `${workload.name} at concurrency ${c}`,
            server: `sandfleet, ${level}`,
            report
          })
        }
        ratios.push(got.reuse / got.fork)
      }
      notes.push(
        `${workload.name} at concurrency ${c}, the reuse level's counters over its runs: ${countersMoved(before, await reuseCounters(fleet.url))}`
      )
      figures.push(
        {
          scenario: 'isolation',
          name: `${workload.name} ok calls/s at concurrency ${c}, fork, median`,
          value: median(rates.fork),
          unit: 'calls/s'
        },
        {
          scenario: 'isolation',
          name: `${workload.name} ok calls/s at concurrency ${c}, reuse, median`,
          value: median(rates.reuse),
          unit: 'calls/s'
        },
        {
          scenario: 'isolation',
          name: `reuse ÷ fork, ${workload.name} calls/s at concurrency ${c}, median of ${ROUNDS} rounds`,
          value: median(ratios),
          unit: '×',
          target: { op: '>=', value: target }
        }
      )
      for (const level of ['fork', 'reuse'] as const) {
        if (shares[level].length > 0)
          figures.push({
            scenario: 'isolation',
            name: `${workload.name} useful share (the calls' cpu_ms ÷ the fleet's CPU) at concurrency ${c}, ${level}, median`,
            value: median(shares[level]),
            unit: '%'
          })
      }
    }
    const p50 = { fork: [] as number[], reuse: [] as number[] }
    for (let round = 1; round <= ROUNDS; round++) {
      for (const level of round % 2 === 1 ? (['fork', 'reuse'] as const) : (['reuse', 'fork'] as const)) {
        const report = await loadExecute(ctx, fleet, at(TRIVIAL, level), 1)
        p50[level].push(report.latencyMs.p50)
        runs.push({
          scenario: `isolation c1 ${round}`,
          workload: `${TRIVIAL.name} at concurrency 1`,
          server: `sandfleet, ${level}`,
          report
        })
      }
    }
    figures.push(
      {
        scenario: 'isolation',
        name: `${TRIVIAL.name} p50 at concurrency 1, fork, median`,
        value: median(p50.fork),
        unit: 'ms'
      },
      {
        scenario: 'isolation',
        name: `${TRIVIAL.name} p50 at concurrency 1, reuse, median`,
        value: median(p50.reuse),
        unit: 'ms',
        target: { op: '<=', value: 1 }
      }
    )
    return { figures, runs, notes }
  }
}
