/**
 * What the compatible APIs add over `/v1/execute`: the same `print(1+1)` through `/v1/execute`,
 * SandboxFusion's `/run_code` and code-judge's `/run`, at concurrency 1, in `--rounds`
 * interleaved rounds against one fleet (so a shared machine's load falls on all three alike).
 * Each endpoint's figure is the median of its rounds' p50s; the overhead is the difference.
 */
import { classifyExecute, runLoad, type Classifier, type LoadReport } from '../load.ts'
import type { Figure, LoadRun, ScenarioResult } from '../report.ts'
import { fleetNote, type BenchContext, type Scenario } from './context.ts'
import { sessionFleet } from './sessions.ts'

function parse (body: string): any {
  try { return JSON.parse(body) } catch { return undefined }
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
  { name: '/run_code', path: '/run_code', body: { code: 'print(1+1)', language: 'python', run_timeout: 10 }, classify: classifyRunCode },
  { name: '/run', path: '/run', body: { type: 'python', solution: 'print(1+1)', input: '' }, classify: classifyRun }
] as const

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)] }

/** The compat overhead over `/v1/execute`, side by side in one run. */
export const compatOverhead: Scenario = {
  summary: 'print(1+1) through /v1/execute, /run_code and /run at concurrency 1, interleaved --rounds (target: compat adds ≤ 0.2 ms p50)',
  async run (ctx: BenchContext): Promise<ScenarioResult> {
    const server = await sessionFleet(ctx)
    const { durationS, warmupS, rounds } = ctx.options
    const p50s = new Map<string, number[]>(ENDPOINTS.map((e) => [e.name, []]))
    const runs: LoadRun[] = []
    for (let round = 0; round < rounds; round++) {
      for (const e of ENDPOINTS) {
        ctx.log(`  round ${round + 1}/${rounds}: print(1+1) → ${e.name} at concurrency 1, ${warmupS} s warm-up + ${durationS} s`)
        const report: LoadReport = await runLoad({ url: server.url, path: e.path, body: JSON.stringify(e.body), callsPerRequest: 1, classify: e.classify },
          { concurrency: 1, durationS, warmupS, serverPid: server.pid })
        if (report.okCalls === 0 || report.failures > 0) throw new Error(`${e.name}: ${JSON.stringify(report.counts)}`)
        ctx.log(`  p50 ${report.latencyMs.p50.toFixed(3)} ms, outcomes ${JSON.stringify(report.counts)}`)
        p50s.get(e.name)?.push(report.latencyMs.p50)
        runs.push({ scenario: 'compat-overhead', server: `sandfleet ${e.name} round ${round + 1}`, report })
      }
    }
    const base = median(p50s.get('/v1/execute') ?? [])
    const figures: Figure[] = ENDPOINTS.map((e) => ({
      scenario: 'compat-overhead', name: `print(1+1) ${e.name} p50, concurrency 1 (median of ${rounds} rounds)`, value: median(p50s.get(e.name) ?? []), unit: 'ms'
    }))
    for (const e of ENDPOINTS.slice(1)) {
      figures.push({
        scenario: 'compat-overhead', name: `${e.name} over /v1/execute, p50 difference`, value: median(p50s.get(e.name) ?? []) - base, unit: 'ms', target: { op: '<=', value: 0.2 }
      })
    }
    return { figures, runs, notes: [fleetNote(server), `rounds interleaved: ${ENDPOINTS.map((e) => e.name).join(' → ')}, ${rounds} times`] }
  }
}
