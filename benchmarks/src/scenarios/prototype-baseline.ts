/**
 * Issue 2's own yardstick, side by side: the fork-on-demand prototype it states its targets beside
 * ("about 740 trivial calls/s and 160 sympy calls/s at concurrency 64", on the machine it was
 * written on), built as it describes (fork-prototype.ts), run here in the same invocation as
 * sandfleet's runs. Its ratio to sandfleet does not move with how fast this machine forks today;
 * issue 2's targets over the prototype's figures give the ratios to meet: 1,000 ÷ 740 = ×1.35 at
 * concurrency 64, 1,200 ÷ 740 = ×1.62 in batches, 150 ÷ 160 = ×0.94 for sympy.
 * Reuses this invocation's trivial-c64, sympy-c64 and batch64 runs (the suite runs them first).
 */
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import type { BenchContext, Scenario } from './context.ts'
import { SYMPY, TRIVIAL, loadExecute } from './workloads.ts'

/** The prototype's figures in issue 2. */
const ISSUE = { trivial: 740, sympy: 160 } as const

export const prototypeBaseline: Scenario = {
  summary: 'print(1+1) and sympy.factor at concurrency 64 against issue 2\'s fork-on-demand prototype, as ratios to sandfleet (targets: the issue\'s over its prototype\'s)',
  async run (ctx: BenchContext): Promise<ScenarioResult> {
    const figures: Figure[] = []
    const runs: LoadRun[] = []
    const notes: string[] = []
    const batch = ctx.has('batch64') ? (await ctx.run('batch64')).runs[0].report : undefined
    for (const [key, workload, scenario, preload, target] of [
      ['trivial', TRIVIAL, 'trivial-c64', '', 1000],
      ['sympy', SYMPY, 'sympy-c64', 'sympy', 150]
    ] as const) {
      const ours = (await ctx.run(scenario)).runs[0].report
      const server = await ctx.prototype(preload)
      const theirs = await loadExecute(ctx, server, workload, ours.concurrency)
      const c = ours.concurrency
      runs.push({ scenario: 'prototype-baseline', server: `prototype${preload === '' ? '' : ` (${preload})`}`, report: theirs })
      notes.push(`prototype: \`${server.description}\``)
      figures.push(
        { scenario: 'prototype-baseline', name: `prototype ${workload.name} ok calls/s, concurrency ${c} (issue 2: ${ISSUE[key]})`, value: theirs.okCallsPerS, unit: 'calls/s' },
        { scenario: 'prototype-baseline', name: `sandfleet ÷ prototype, ${workload.name} calls/s at concurrency ${c}`, value: ours.okCallsPerS / theirs.okCallsPerS, unit: '×', target: { op: '>=', value: target / ISSUE[key] } }
      )
      if (key === 'trivial' && batch !== undefined) {
        figures.push({ scenario: 'prototype-baseline', name: `sandfleet in batches ÷ prototype, ${workload.name} calls/s`, value: batch.okCallsPerS / theirs.okCallsPerS, unit: '×', target: { op: '>=', value: 1200 / ISSUE[key] } })
      }
      if (ours.serverCpuMsPerCall !== undefined && theirs.serverCpuMsPerCall !== undefined) {
        figures.push({ scenario: 'prototype-baseline', name: `prototype ÷ sandfleet, server CPU per ${workload.name} call`, value: theirs.serverCpuMsPerCall / ours.serverCpuMsPerCall, unit: '×' })
      }
    }
    return { figures, runs, notes }
  }
}
