/**
 * What the compatible APIs add over `/v1/execute`: the same `print(1+1)` through `/v1/execute`,
 * SandboxFusion's `/run_code` and code-judge's `/run`, at concurrency 1 on one connection, called
 * in turn (a round is one call to each, each round starting at the next endpoint), so a shared
 * machine's load falls on all three alike. The overhead is the difference of the p50s, and beside
 * it the median of the differences within a round.
 */
import { medianPairedDifference, runInterleaved } from '../interleave.ts'
import { classifyExecute, type Classifier } from '../load.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { fleetNote, type BenchContext, type Scenario } from './context.ts'
import { sessionFleet } from './sessions.ts'

function parse(body: string): any {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

/** `/run_code`: `ok` when SandboxFusion's status is `Success` and stdout is `2\n`. */
const classifyRunCode: Classifier = (statusCode, body) => {
  if (statusCode !== 200) return [`http_${statusCode}`]
  const r = parse(body)
  if (r?.status !== 'Success') return [`run_code_${String(r?.status)}`]
  return [r.run_result?.stdout === '2\n' ? 'ok' : 'wrong_output']
}

/** code-judge `/run`: `ok` when `run_success` and stdout is `2\n`. */
const classifyRun: Classifier = (statusCode, body) => {
  if (statusCode !== 200) return [`http_${statusCode}`]
  const r = parse(body)
  if (r?.run_success !== true) return [`run_${String(r?.reason || 'failed')}`]
  return [r.stdout === '2\n' ? 'ok' : 'wrong_output']
}

const ENDPOINTS = [
  { name: '/v1/execute', path: '/v1/execute', body: { code: 'print(1+1)' }, classify: classifyExecute('2\n') },
  {
    name: '/run_code',
    path: '/run_code',
    body: { code: 'print(1+1)', language: 'python', run_timeout: 10 },
    classify: classifyRunCode
  },
  { name: '/run', path: '/run', body: { type: 'python', solution: 'print(1+1)', input: '' }, classify: classifyRun }
] as const

/** The compat overhead over `/v1/execute`, side by side in one run. */
export const compatOverhead: Scenario = {
  summary:
    'print(1+1) through /v1/execute, /run_code and /run at concurrency 1, interleaved call by call (target: compat adds ≤ 0.2 ms p50)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await sessionFleet(ctx)
    const { durationS, warmupS } = ctx.options
    ctx.log(
      `  print(1+1) → ${ENDPOINTS.map((e) => e.name).join(', ')} in turn at concurrency 1, ${warmupS} s warm-up + ${durationS} s`
    )
    const r = await runInterleaved(
      server.url,
      ENDPOINTS.map((e) => ({ ...e, body: JSON.stringify(e.body) })),
      { durationS, warmupS }
    )
    ENDPOINTS.forEach((e, i) => {
      if (r.failures[i] > 0 || r.times[i].length === 0) throw new Error(`${e.name}: ${JSON.stringify(r.counts[i])}`)
      ctx.log(`  ${e.name}: p50 ${r.latencyMs[i].p50.toFixed(3)} ms over ${r.times[i].length} calls`)
    })
    const figures: Figure[] = ENDPOINTS.map((e, i) => ({
      scenario: 'compat-overhead',
      name: `print(1+1) ${e.name} p50, concurrency 1 (${r.times[i].length} calls, interleaved)`,
      value: r.latencyMs[i].p50,
      unit: 'ms'
    }))
    for (let i = 1; i < ENDPOINTS.length; i++) {
      figures.push(
        {
          scenario: 'compat-overhead',
          name: `${ENDPOINTS[i].name} over /v1/execute, p50 difference`,
          value: r.latencyMs[i].p50 - r.latencyMs[0].p50,
          unit: 'ms',
          target: { op: '<=', value: 0.2 }
        },
        {
          scenario: 'compat-overhead',
          name: `${ENDPOINTS[i].name} over /v1/execute, median of the paired differences (same round)`,
          value: medianPairedDifference(r.times[i], r.times[0]),
          unit: 'ms'
        }
      )
    }
    return {
      figures,
      runs: [],
      notes: [
        fleetNote(server),
        `compat-overhead: one connection, the three endpoints called in turn (${ENDPOINTS.map((e) => e.name).join(', ')}), each round starting at the next one, so a shared machine's load falls on all three alike`
      ]
    }
  }
}
