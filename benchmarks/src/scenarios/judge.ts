/**
 * `sandfleet bench judge`: problems of 20 stdin tests (Python and C++, every 5th submission wrong on its last test)
 * judged by `POST /v1/judge`, side by side in one run with sandfleet's own `/v1/execute/batch` of the same runs (the
 * caller comparing; Python) and, when their URLs are given, code-judge and SandboxFusion called as rStar2-Agent and
 * verl call them (workloads/judge-callers.ts). The systems take turns round by round, so a shared machine's load falls
 * on all alike: problems/s, tests/s, every verdict checked, the CPU of a test and of a compile, the compile cache's hit
 * rate, and the ratios the issue sets. Then a burst of mixed submissions at once: every verdict right, none lost.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Figure, ScenarioResult } from '../report.ts'
import {
  codeJudge,
  sandboxFusion,
  sandfleetExecuteBatch,
  sandfleetJudge,
  type JudgeCaller,
  type ProblemOutcome
} from '../workloads/judge-callers.ts'
import { benchProblem, burst, type BenchProblem, type JudgeBenchLanguage } from '../workloads/judge-problems.ts'
import { request } from 'undici'
import type { JudgeResult } from '@sandfleet/protocol'
import { fleetNote, type BenchContext, type Scenario } from './context.ts'

/** Parameters of the judge benchmark. */
export interface JudgeBenchOptions {
  /** code-judge to compare with (its base URL), when given. */
  codeJudgeUrl: string | undefined
  /** SandboxFusion to compare with (its base URL), when given. */
  sandboxFusionUrl: string | undefined
  /** Problems each system judges a round, per language. */
  problems: number
  /** The languages judged. */
  languages: JudgeBenchLanguage[]
  /** Submissions of the burst (0: none). */
  submissions: number
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : (s[Math.floor(s.length / 2)] as number)
}

/** One system's round: `problems` judged, `concurrency` in flight. */
async function round(
  caller: JudgeCaller,
  problems: readonly BenchProblem[],
  concurrency: number
): Promise<{ seconds: number; outcomes: ProblemOutcome[] }> {
  const outcomes = new Array<ProblemOutcome>(problems.length)
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: Math.min(concurrency, problems.length) }, async () => {
      while (next < problems.length) {
        const i = next++
        try {
          outcomes[i] = await caller.judge(problems[i] as BenchProblem)
        } catch (err) {
          outcomes[i] = { verdict: `unanswered: ${(err as Error).message}`, testsRun: 0 }
        }
      }
    })
  )
  return { seconds: (performance.now() - t0) / 1000, outcomes }
}

/** What a system did over its rounds. */
interface Tally {
  perSecond: number[]
  testsPerSecond: number[]
  right: number
  wrong: Record<string, number>
  testCpuMs: number[]
  compileCpuMs: number[]
  compiled: number
  cached: number
}

const emptyTally = (): Tally => ({
  perSecond: [],
  testsPerSecond: [],
  right: 0,
  wrong: {},
  testCpuMs: [],
  compileCpuMs: [],
  compiled: 0,
  cached: 0
})

/** The figures of one language: each system's rate and verdicts, sandfleet's costs, the ratios. */
function languageFigures(
  language: JudgeBenchLanguage,
  tallies: ReadonlyMap<string, Tally>,
  judgeName: string,
  concurrency: number
): Figure[] {
  const scenario = `judge ${language}`
  const figures: Figure[] = []
  const judged = tallies.get(judgeName) as Tally
  for (const [name, t] of tallies) {
    const total = t.right + Object.values(t.wrong).reduce((a, b) => a + b, 0)
    figures.push(
      {
        scenario,
        name: `${name}: problems/s (20 tests each, ${concurrency} in flight, median of rounds)`,
        value: median(t.perSecond),
        unit: 'problems/s'
      },
      { scenario, name: `${name}: tests/s`, value: median(t.testsPerSecond), unit: 'tests/s' },
      {
        scenario,
        name: `${name}: verdicts wrong of ${total}${Object.keys(t.wrong).length === 0 ? '' : ` (${JSON.stringify(t.wrong)})`}`,
        value: total - t.right,
        unit: 'problems',
        ...(name === judgeName ? { target: { op: '<=' as const, value: 0 } } : {})
      }
    )
    if (name === judgeName) continue
    const target =
      language === 'python' && name.startsWith('code-judge')
        ? 15
        : language === 'python' && name.startsWith('sandfleet /v1/execute/batch')
          ? 2
          : language === 'cpp' && name.startsWith('SandboxFusion')
            ? 20
            : undefined
    figures.push({
      scenario,
      name: `/v1/judge over ${name}, problems/s`,
      value: median(judged.perSecond) / median(t.perSecond),
      unit: '×',
      ...(target === undefined ? {} : { target: { op: '>=' as const, value: target } })
    })
  }
  figures.push({
    scenario,
    name: '/v1/judge: CPU of a test (median, its own)',
    value: median(judged.testCpuMs),
    unit: 'ms'
  })
  if (judged.compiled > 0)
    figures.push(
      {
        scenario,
        name: '/v1/judge: CPU of a compile (median, not cached)',
        value: median(judged.compileCpuMs),
        unit: 'ms'
      },
      {
        scenario,
        name: '/v1/judge: compile cache hit rate',
        value: judged.cached / judged.compiled,
        unit: 'of compiles'
      }
    )
  return figures
}

/** The fleet's verdicts: retried by a caller, as the clients retry them (never a verdict on the program). */
const FLEET_VERDICTS: ReadonlySet<string> = new Set(['overloaded', 'queue_timeout', 'infra_error'])

/**
 * One submission of the burst through `/v1/judge`, its fleet verdicts retried as the clients do (backoff from 200 ms,
 * 8 attempts); undefined when no answer came at all (lost).
 */
async function judgeOnce(url: string, body: unknown, retried: { count: number }): Promise<string | undefined> {
  let verdict: string | undefined
  for (let attempt = 1; attempt <= 8; attempt++) {
    try {
      const res = await request(`${url}/v1/judge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        headersTimeout: 1_800_000,
        bodyTimeout: 1_800_000
      })
      verdict = res.statusCode === 200 ? ((await res.body.json()) as JudgeResult).verdict : `http_${res.statusCode}`
    } catch {
      verdict = undefined
    }
    if (verdict !== undefined && !FLEET_VERDICTS.has(verdict) && verdict !== 'http_429') return verdict
    retried.count++
    await sleep(Math.min(5000, 200 * 2 ** (attempt - 1)))
  }
  return verdict
}

/** The burst: `count` mixed submissions at once through `/v1/judge`, each verdict checked. */
async function burstFigures(url: string, count: number, ctx: BenchContext): Promise<Figure[]> {
  const subs = burst(count, `${process.pid} ${Date.now()}`)
  const retried = { count: 0 }
  const t0 = performance.now()
  const got = await Promise.all(subs.map(async (s) => await judgeOnce(url, s.request, retried)))
  const seconds = (performance.now() - t0) / 1000
  const lost = got.filter((v) => v === undefined).length
  const wrong: Record<string, number> = {}
  got.forEach((v, i) => {
    const want = subs[i]?.verdict
    if (v !== undefined && v !== want) wrong[`${String(want)}→${v}`] = (wrong[`${String(want)}→${v}`] ?? 0) + 1
  })
  const wrongCount = Object.values(wrong).reduce((a, b) => a + b, 0)
  ctx.log(
    `  burst: ${count} submissions in ${seconds.toFixed(1)} s, ${wrongCount} wrong, ${lost} lost, ${retried.count} fleet verdicts retried`
  )
  const kinds = [...new Set(subs.map((s) => s.verdict))].join(', ')
  return [
    {
      scenario: 'judge burst',
      name: `${count} submissions at once (${kinds}): verdicts wrong${wrongCount === 0 ? '' : ` ${JSON.stringify(wrong)}`}`,
      value: wrongCount,
      unit: 'submissions',
      target: { op: '<=', value: 0 }
    },
    {
      scenario: 'judge burst',
      name: `${count} submissions at once: lost`,
      value: lost,
      unit: 'submissions',
      target: { op: '<=', value: 0 }
    },
    {
      scenario: 'judge burst',
      name: `${count} submissions at once: the fleet's verdicts (queue_timeout, overloaded, 429) retried, as a client retries them`,
      value: retried.count,
      unit: 'retries'
    },
    { scenario: 'judge burst', name: `${count} submissions at once: all answered in`, value: seconds, unit: 's' }
  ]
}

/** The scenario. */
export const judgeBench: Scenario = {
  summary:
    'problems of 20 stdin tests (Python, C++) by /v1/judge beside /v1/execute/batch, and code-judge and SandboxFusion when given (--code-judge-url, --sandbox-fusion-url); then --submissions mixed ones at once',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const server = await ctx.fleet()
    const o = ctx.options.judge
    const concurrency = ctx.options.concurrency ?? 8
    const rounds = ctx.options.rounds
    const figures: Figure[] = []
    const notes = [
      fleetNote(server),
      `judge: ${o.problems} problems a system a round, ${rounds} rounds, the systems taking turns (each round starting at the next one); ${concurrency} problems in flight; every 5th submission wrong on its last test; a C++ source new for every problem of every round`
    ]
    for (const language of o.languages) {
      const judge = sandfleetJudge(server.url)
      const callers: JudgeCaller[] = [judge]
      if (language === 'python') callers.push(sandfleetExecuteBatch(server.url))
      if (o.codeJudgeUrl !== undefined) callers.push(codeJudge(o.codeJudgeUrl))
      if (o.sandboxFusionUrl !== undefined) callers.push(sandboxFusion(o.sandboxFusionUrl))
      const tallies = new Map(callers.map((c) => [c.name, emptyTally()]))
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < callers.length; k++) {
          const caller = callers[(r + k) % callers.length] as JudgeCaller
          const problems = Array.from({ length: o.problems }, (_, i) =>
            benchProblem(language, i, `round ${r} ${caller.name} ${process.pid}`)
          )
          const { seconds, outcomes } = await round(caller, problems, concurrency)
          const t = tallies.get(caller.name) as Tally
          t.perSecond.push(problems.length / seconds)
          t.testsPerSecond.push(outcomes.reduce((a, x) => a + x.testsRun, 0) / seconds)
          outcomes.forEach((x, i) => {
            const want = problems[i]?.verdict
            if (x.verdict === want) t.right++
            else t.wrong[`${String(want)}→${x.verdict}`] = (t.wrong[`${String(want)}→${x.verdict}`] ?? 0) + 1
            t.testCpuMs.push(...(x.testCpuMs ?? []))
            if (x.cached !== undefined) {
              t.compiled++
              if (x.cached) t.cached++
            }
            if (x.compileCpuMs !== undefined) t.compileCpuMs.push(x.compileCpuMs)
          })
          ctx.log(
            `  ${language} round ${r + 1}: ${caller.name}: ${(problems.length / seconds).toFixed(2)} problems/s, ${outcomes.filter((x, i) => x.verdict === problems[i]?.verdict).length}/${problems.length} verdicts right`
          )
        }
      }
      figures.push(...languageFigures(language, tallies, judge.name, concurrency))
    }
    if (o.submissions > 0) figures.push(...(await burstFigures(server.url, o.submissions, ctx)))
    return { figures, runs: [], notes }
  }
}
