/**
 * Pool size: `print(1+1)` and `sympy.factor` at concurrency 64 on fleets of `--sizes` sandboxes
 * (default 2, 4, 8). Every fleet is started first (an idle fleet costs memory, not CPU); then
 * `--rounds` rounds run each workload on each size in turn, so that the other work on a shared
 * machine spreads over the sizes instead of landing on one. Per size: the median of the rounds
 * and their range, and each size as a ratio to the first.
 */
import type { Server } from '../fleet.ts'
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import { median } from '../stats.ts'
import { fleetNote, serveArgs, type BenchContext, type Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadExecute, type Workload } from './workloads.ts'

/** The scenario. */
export const poolSize: Scenario = {
  summary:
    'print(1+1) and sympy.factor at concurrency 64 for each pool size of --sizes (2,4,8), --rounds (3) interleaved rounds',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const c = ctx.options.concurrency ?? 64
    const { sizes, rounds } = ctx.options
    const fleets: Server[] = []
    for (const size of sizes) fleets.push(await ctx.startFleet(serveArgs(ctx.options, size)))
    const runs: LoadRun[] = []
    const rates = new Map<string, number[]>()
    const key = (w: Workload, size: number): string => `${w.name}@${size}`
    try {
      for (let round = 1; round <= rounds; round++) {
        for (const workload of [TRIVIAL, SYMPY]) {
          for (const [i, size] of sizes.entries()) {
            ctx.log(`round ${round}/${rounds}, pool size ${size}`)
            const report = await loadExecute(ctx, fleets[i], workload, c)
            runs.push({
              scenario: `pool-size ${workload === TRIVIAL ? 'trivial' : 'sympy'}-c${c} round ${round}`,
              server: `sandfleet poolSize=${size}`,
              report
            })
            const k = key(workload, size)
            rates.set(k, [...(rates.get(k) ?? []), report.okCallsPerS])
          }
        }
      }
    } finally {
      await Promise.all(fleets.map((f) => f.close()))
    }
    const figures: Figure[] = []
    for (const workload of [TRIVIAL, SYMPY]) {
      const base = median(rates.get(key(workload, sizes[0])) ?? [])
      for (const size of sizes) {
        const xs = rates.get(key(workload, size)) ?? []
        const m = median(xs)
        figures.push({
          scenario: 'pool-size',
          name: `${workload.name}, poolSize=${size}: median ok calls/s of ${xs.length} (range ${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`,
          value: m,
          unit: 'calls/s'
        })
        if (size !== sizes[0])
          figures.push({
            scenario: 'pool-size',
            name: `${workload.name}, poolSize=${size} ÷ poolSize=${sizes[0]}`,
            value: m / base,
            unit: '×'
          })
      }
    }
    return { figures, runs, notes: fleets.map(fleetNote) }
  }
}
