/**
 * Issue 2's own yardstick, side by side: the fork-on-demand prototype it states its targets beside
 * ("about 740 trivial calls/s and 160 sympy calls/s at concurrency 64", on the machine it was
 * written on), built as it describes (fork-prototype.ts), run here taking turns with sandfleet.
 * Their ratio does not move with how fast this machine forks today; issue 2's targets over the
 * prototype's figures give the ratios to meet: 1,000 ÷ 740 = ×1.35 at concurrency 64, 1,200 ÷ 740
 * = ×1.62 in batches, 150 ÷ 160 = ×0.94 for sympy.
 *
 * A shared machine's pace moves by ×1.5 within minutes, so each ratio is the median of
 * `ROUNDS` rounds, each round sandfleet's run then the prototype's, back to back.
 */
import { emptyResult, type ScenarioResult } from '../report.ts'
import { median } from '../stats.ts'
import { peerUsefulShare } from '../load.ts'
import type { BenchContext, Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadBatch, loadExecute } from './workloads.ts'

/** The prototype's figures in issue 2. */
const ISSUE = { trivial: 740, sympy: 160 } as const
const ROUNDS = 3

export const prototypeBaseline: Scenario = {
  summary: `print(1+1) (single calls and batches) and sympy.factor at concurrency 64 taking turns with issue 2's fork-on-demand prototype, ${ROUNDS} rounds, median ratios (targets: the issue's over its prototype's)`,
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const { figures, runs, notes } = emptyResult()
    const fleet = await ctx.fleet()
    const c = ctx.options.concurrency ?? 64
    const name = (what: string): string => `sandfleet ÷ prototype, ${what}, median of ${ROUNDS} rounds`
    for (const [key, workload, preload, target] of [
      ['trivial', TRIVIAL, '', 1000],
      ['sympy', SYMPY, 'sympy', 150]
    ] as const) {
      const prototype = await ctx.prototype(preload)
      notes.push(`prototype: \`${prototype.description}\``)
      const ratios: number[] = []
      const batchRatios: number[] = []
      const theirs: number[] = []
      const shares = { sandfleet: [] as number[], prototype: [] as number[] }
      for (let round = 1; round <= ROUNDS; round++) {
        ctx.log(`  ${workload.name}, round ${round} of ${ROUNDS}`)
        const ours = await loadExecute(ctx, fleet, workload, c)
        const batch = key === 'trivial' ? await loadBatch(ctx, fleet, workload, ctx.options.batchSize, 4) : undefined
        const proto = await loadExecute(ctx, prototype, workload, c)
        ratios.push(ours.okCallsPerS / proto.okCallsPerS)
        if (batch !== undefined) batchRatios.push(batch.okCallsPerS / proto.okCallsPerS)
        theirs.push(proto.okCallsPerS)
        const oursShare = ours.usefulShare
        const protoShare = peerUsefulShare(ours, proto)
        if (oursShare !== undefined) shares.sandfleet.push(oursShare * 100)
        if (protoShare !== undefined) shares.prototype.push(protoShare * 100)
        runs.push({ scenario: `prototype-baseline ${round}`, server: 'sandfleet', report: ours })
        if (batch !== undefined)
          runs.push({
            scenario: `prototype-baseline ${round}`,
            server: `sandfleet, batches of ${ctx.options.batchSize}`,
            report: batch
          })
        runs.push({
          scenario: `prototype-baseline ${round}`,
          server: `prototype${preload === '' ? '' : ` (${preload})`}`,
          report: proto
        })
      }
      figures.push(
        {
          scenario: 'prototype-baseline',
          name: `prototype ${workload.name} ok calls/s, concurrency ${c}, median (issue 2: ${ISSUE[key]})`,
          value: median(theirs),
          unit: 'calls/s'
        },
        {
          scenario: 'prototype-baseline',
          name: name(`${workload.name} calls/s at concurrency ${c}`),
          value: median(ratios),
          unit: '×',
          target: { op: '>=', value: target / ISSUE[key] }
        }
      )
      if (shares.sandfleet.length > 0)
        figures.push({
          scenario: 'prototype-baseline',
          name: `sandfleet useful share (the calls' cpu_ms ÷ the fleet's CPU), ${workload.name} at concurrency ${c}, median`,
          value: median(shares.sandfleet),
          unit: '%'
        })
      if (shares.prototype.length > 0)
        figures.push({
          scenario: 'prototype-baseline',
          name: `prototype useful share (sandfleet's cpu_ms a call × its calls ÷ its processes' CPU), ${workload.name} at concurrency ${c}, median`,
          value: median(shares.prototype),
          unit: '%'
        })
      if (batchRatios.length > 0) {
        figures.push({
          scenario: 'prototype-baseline',
          name: name(`${workload.name} calls/s, sandfleet in batches of ${ctx.options.batchSize}`),
          value: median(batchRatios),
          unit: '×',
          target: { op: '>=', value: 1200 / ISSUE[key] }
        })
      }
    }
    return { figures, runs, notes }
  }
}
