/**
 * Pool size: `print(1+1)` and `sympy.factor` at concurrency 64 on fleets of `--sizes` sandboxes
 * (default 2, 4, 8), one fleet at a time, in one invocation so the sizes compare as ratios.
 */
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import { fleetNote, serveArgs, type BenchContext, type Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadExecute } from './workloads.ts'

/** The scenario. */
export const poolSize: Scenario = {
  summary: 'print(1+1) and sympy.factor at concurrency 64 for each pool size of --sizes (2,4,8)',
  async run (ctx: BenchContext): Promise<ScenarioResult> {
    if (ctx.options.url !== undefined) throw new Error('pool-size starts its own fleets; it cannot use --url')
    const c = ctx.options.concurrency ?? 64
    const runs: LoadRun[] = []
    const notes: string[] = []
    const best: Record<string, { size: number, rate: number }> = {}
    for (const size of ctx.options.sizes) {
      const server = await ctx.startFleet(serveArgs(ctx.options, size))
      try {
        for (const workload of [TRIVIAL, SYMPY]) {
          const report = await loadExecute(ctx, server, workload, c)
          runs.push({ scenario: `pool-size ${workload === TRIVIAL ? 'trivial' : 'sympy'}-c${c}`, server: `sandfleet poolSize=${size}`, report })
          const b = best[workload.name]
          if (b === undefined || report.okCallsPerS > b.rate) best[workload.name] = { size, rate: report.okCallsPerS }
        }
        notes.push(fleetNote(server))
      } finally {
        await server.close()
      }
    }
    const figures: Figure[] = []
    for (const [name, b] of Object.entries(best)) {
      figures.push({ scenario: 'pool-size', name: `best pool size for ${name} at concurrency ${c} (of ${ctx.options.sizes.join(', ')})`, value: b.size, unit: 'sandboxes' })
      const smallest = runs.find((r) => r.server === `sandfleet poolSize=${ctx.options.sizes[0]}` && r.scenario.startsWith(`pool-size ${name === TRIVIAL.name ? 'trivial' : 'sympy'}`))
      if (smallest !== undefined && smallest.report.okCallsPerS > 0) {
        figures.push({ scenario: 'pool-size', name: `${name}: best ÷ poolSize=${ctx.options.sizes[0]}, ok calls/s`, value: b.rate / smallest.report.okCallsPerS, unit: '×' })
      }
    }
    return { figures, runs, notes }
  }
}
