/** The command table: scenario name → scenario. `suite` runs the targets in order. */
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import type { BenchContext, Scenario } from './context.ts'
import { naiveBaseline } from './naive-baseline.ts'
import { poolSize } from './pool-size.ts'
import { prototypeBaseline } from './prototype-baseline.ts'
import { timeoutCost } from './timeout-cost.ts'
import { batch64, sympyC64, trivialC1, trivialC64 } from './throughput.ts'
import { isolatesBench, javascriptBench, javascriptOnlyBench, pyodideBench } from './isolates.ts'
import { dockerBench } from './docker.ts'
import { compatOverhead } from './compat.ts'
import { sessionC1, sessionC16, sessionsIdle } from './sessions.ts'
import { isolationBench } from './isolation.ts'
import { judgeBench } from './judge.ts'

/** What `sessions` runs, in this order. */
export const SESSIONS_SUITE = ['session-c1', 'session-c16', 'sessions-idle', 'compat-overhead'] as const

/** Runs `names` in order and gathers their figures, runs and notes as one result. */
function group(names: readonly string[], summary: string): Scenario {
  return {
    summary,
    async run(ctx: BenchContext): Promise<ScenarioResult> {
      const figures: Figure[] = []
      const runs: LoadRun[] = []
      const notes = new Set<string>()
      for (const name of names) {
        const r = await ctx.run(name)
        figures.push(...r.figures)
        for (const run of r.runs) if (!runs.includes(run)) runs.push(run)
        for (const n of r.notes) notes.add(n)
      }
      return { figures, runs, notes: [...notes] }
    }
  }
}

/** What `suite` runs, in this order (each baseline right after the runs it divides). */
export const SUITE = [
  'trivial-c1',
  'trivial-c64',
  'naive-baseline',
  'batch64',
  'sympy-c64',
  'prototype-baseline',
  'timeout-cost'
] as const

const suite = group(SUITE, `every target in one invocation (${SUITE.join(', ')}), as markdown for RESULTS.md`)

/** Every scenario `npm run bench -- NAME` knows. */
export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'trivial-c1': trivialC1,
  judge: judgeBench,
  'trivial-c64': trivialC64,
  batch64,
  'sympy-c64': sympyC64,
  'timeout-cost': timeoutCost,
  'naive-baseline': naiveBaseline,
  'prototype-baseline': prototypeBaseline,
  'pool-size': poolSize,
  pyodide: pyodideBench,
  javascript: javascriptBench,
  'javascript-only': javascriptOnlyBench,
  isolates: isolatesBench,
  docker: dockerBench,
  'session-c1': sessionC1,
  'session-c16': sessionC16,
  'sessions-idle': sessionsIdle,
  'compat-overhead': compatOverhead,
  isolation: isolationBench,
  sessions: group(SESSIONS_SUITE, `the sessions and compat figures in one invocation (${SESSIONS_SUITE.join(', ')})`),
  suite
}
