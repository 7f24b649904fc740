/** The command table: scenario name → scenario. `suite` runs the targets in order. */
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import type { BenchContext, Scenario } from './context.ts'
import { naiveBaseline } from './naive-baseline.ts'
import { poolSize } from './pool-size.ts'
import { replaceAfterTimeout } from './replace-after-timeout.ts'
import { batch64, sympyC64, trivialC1, trivialC64 } from './throughput.ts'
import { isolatesBench, javascriptBench, pyodideBench } from './isolates.ts'

/** What `suite` runs, in this order (naive-baseline right after the trivial-c64 run it divides). */
export const SUITE = ['trivial-c1', 'trivial-c64', 'naive-baseline', 'batch64', 'sympy-c64', 'replace-after-timeout'] as const

const suite: Scenario = {
  summary: `every target in one invocation (${SUITE.join(', ')}), as markdown for RESULTS.md`,
  async run (ctx: BenchContext): Promise<ScenarioResult> {
    const figures: Figure[] = []
    const runs: LoadRun[] = []
    const notes = new Set<string>()
    for (const name of SUITE) {
      const r = await ctx.run(name)
      figures.push(...r.figures)
      for (const run of r.runs) if (!runs.includes(run)) runs.push(run)
      for (const n of r.notes) notes.add(n)
    }
    return { figures, runs, notes: [...notes] }
  }
}

/** Every scenario `npm run bench -- NAME` knows. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'trivial-c1': trivialC1,
  'trivial-c64': trivialC64,
  batch64,
  'sympy-c64': sympyC64,
  'replace-after-timeout': replaceAfterTimeout,
  'naive-baseline': naiveBaseline,
  'pool-size': poolSize,
  pyodide: pyodideBench,
  javascript: javascriptBench,
  isolates: isolatesBench,
  suite
}
