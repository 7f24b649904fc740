/**
 * The naive baseline side by side: the same `print(1+1)` closed loop against a plain node:http
 * server that spawns `python3 -c` per call, in the same invocation, as a ratio to sandfleet.
 * Reuses this invocation's `trivial-c64` run (the suite runs it just before), or runs it; and the
 * same at concurrency 1 against this invocation's `trivial-c1`, when that ran.
 */
import { peerUsefulShare, type LoadReport } from '../load.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { type BenchContext, type Scenario } from './context.ts'
import { TRIVIAL, loadExecute } from './workloads.ts'

/**
 * The useful share of each at concurrency `c`: sandfleet's from its `cpu_ms`, the naive server's from sandfleet's
 * `cpu_ms` for the same call.
 */
function usefulShares(sandfleet: LoadReport, naive: LoadReport, c: number): Figure[] {
  const ours = sandfleet.usefulShare
  const theirs = peerUsefulShare(sandfleet, naive)
  return [
    ...(ours === undefined
      ? []
      : [
          {
            scenario: 'naive-baseline',
            name: `sandfleet useful share (the calls' cpu_ms ÷ the fleet's CPU), print(1+1) at concurrency ${c}`,
            value: ours * 100,
            unit: '%'
          }
        ]),
    ...(theirs === undefined
      ? []
      : [
          {
            scenario: 'naive-baseline',
            name: `naive useful share (sandfleet's cpu_ms a call × its calls ÷ its processes' CPU), print(1+1) at concurrency ${c}`,
            value: theirs * 100,
            unit: '%'
          }
        ])
  ]
}

/** sandfleet's trivial-c64 calls/s ÷ the naive server's. */
export const naiveBaseline: Scenario = {
  summary:
    'print(1+1) at concurrency 64 against a node:http server spawning `python3 -c` per call, as a ratio to sandfleet',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const ours = await ctx.run('trivial-c64')
    const sandfleet = ours.runs[0].report
    const naive = await ctx.naive()
    const report = await loadExecute(ctx, naive, TRIVIAL, sandfleet.concurrency)
    const c = sandfleet.concurrency
    const c1 = ctx.has('trivial-c1') ? (await ctx.run('trivial-c1')).runs[0].report : undefined
    const naiveC1 = c1 === undefined ? undefined : await loadExecute(ctx, naive, TRIVIAL, c1.concurrency)
    const atC1 =
      c1 === undefined || naiveC1 === undefined
        ? []
        : [
            {
              scenario: 'naive-baseline',
              name: `naive ÷ sandfleet, p50 latency at concurrency ${c1.concurrency}`,
              value: naiveC1.latencyMs.p50 / c1.latencyMs.p50,
              unit: '×'
            }
          ]
    return {
      figures: [
        {
          scenario: 'naive-baseline',
          name: `naive print(1+1) ok calls/s, concurrency ${c}`,
          value: report.okCallsPerS,
          unit: 'calls/s'
        },
        {
          scenario: 'naive-baseline',
          name: `sandfleet ÷ naive, ok calls/s at concurrency ${c}`,
          value: sandfleet.okCallsPerS / report.okCallsPerS,
          unit: '×'
        },
        {
          scenario: 'naive-baseline',
          name: `naive ÷ sandfleet, p50 latency at concurrency ${c}`,
          value: report.latencyMs.p50 / sandfleet.latencyMs.p50,
          unit: '×'
        },
        ...(report.serverCpuMsPerCall === undefined || sandfleet.serverCpuMsPerCall === undefined
          ? []
          : [
              {
                scenario: 'naive-baseline',
                name: `naive ÷ sandfleet, server CPU per call at concurrency ${c} (not skewed by other work)`,
                value: report.serverCpuMsPerCall / sandfleet.serverCpuMsPerCall,
                unit: '×'
              }
            ]),
        ...atC1,
        ...usefulShares(sandfleet, report, c)
      ],
      runs: [
        { scenario: 'naive-baseline', server: 'naive', report },
        ...(naiveC1 === undefined ? [] : [{ scenario: 'naive-baseline c1', server: 'naive', report: naiveC1 }])
      ],
      notes: [...ours.notes, `naive: \`${naive.description}\``]
    }
  }
}
