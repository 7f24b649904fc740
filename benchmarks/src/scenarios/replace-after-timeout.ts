/**
 * Time from a `timeout` result until the sandbox serves again. On a fleet of one sandbox (so
 * that nothing else can answer), each round sends `while True: pass` with a 100 ms timeout, and
 * the moment its `timeout` result arrives sends `print(1+1)`, which waits in the queue until the
 * replacement is ready: the time between the two answers. The runner's own figure (from leaving
 * service to replacement ready, `sandfleet_runner_sandbox_replace_seconds`) is read from
 * `/metrics` beside it. With `--url` only the metric is reported.
 */
import { request } from 'undici'
import { existingServer, type Server } from '../fleet.ts'
import type { Figure, ScenarioResult } from '../report.ts'
import { summarize } from '../stats.ts'
import { fleetNote, serveArgs, type BenchContext, type Scenario } from './context.ts'

interface Result { status?: string, stdout?: string, sandbox?: string }

async function execute (url: string, body: unknown): Promise<Result> {
  const res = await request(`${url}/v1/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`/v1/execute answered HTTP ${res.statusCode}: ${text.slice(0, 200)}`)
  return JSON.parse(text) as Result
}

/** Sum and count of the replacement-time histogram over every label set. */
export async function replaceMetric (url: string): Promise<{ sum: number, count: number }> {
  const res = await request(`${url}/metrics`)
  const text = await res.body.text()
  let sum = 0
  let count = 0
  for (const line of text.split('\n')) {
    const m = /^sandfleet_runner_sandbox_replace_seconds_(sum|count)(?:\{[^}]*\})? ([\d.eE+-]+)$/.exec(line)
    if (m === null) continue
    if (m[1] === 'sum') sum += Number(m[2])
    else count += Number(m[2])
  }
  return { sum, count }
}

/** The scenario. */
export const replaceAfterTimeout: Scenario = {
  summary: 'time from a timeout result until the (single) sandbox serves again (target: ≤ 0.5 s)',
  async run (ctx: BenchContext): Promise<ScenarioResult> {
    const own = ctx.options.url === undefined
    const server: Server = own ? await ctx.startFleet(serveArgs(ctx.options, 1)) : existingServer(ctx.options.url as string)
    const rounds = ctx.options.repeats
    ctx.log(`  ${rounds} timeouts on ${server.url}${own ? ' (pool size 1)' : ''}`)
    const before = await replaceMetric(server.url)
    const gaps: number[] = []
    const problems: string[] = []
    for (let i = 0; i < rounds; i++) {
      const warm = await execute(server.url, { code: 'print(1+1)' })
      if (warm.status !== 'ok') problems.push(`round ${i}: warm call answered ${warm.status}`)
      const spin = await execute(server.url, { code: 'while True: pass', timeout_ms: 100 })
      const t0 = performance.now()
      if (spin.status !== 'timeout') { problems.push(`round ${i}: the spin answered ${spin.status}, not timeout`); continue }
      if (!own) continue
      const next = await execute(server.url, { code: 'print(1+1)' })
      const gap = performance.now() - t0
      if (next.status !== 'ok' || next.stdout !== '2\n') { problems.push(`round ${i}: the call after the timeout answered ${next.status}`); continue }
      if (next.sandbox === spin.sandbox) problems.push(`round ${i}: the same sandbox ${spin.sandbox ?? '?'} served again (not replaced)`)
      gaps.push(gap / 1000)
    }
    // The runner records the replacement when it is ready; give the last one a moment.
    let after = await replaceMetric(server.url)
    for (let i = 0; i < 50 && after.count - before.count < rounds; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      after = await replaceMetric(server.url)
    }
    const replaced = after.count - before.count
    if (own) await server.close()
    const figures: Figure[] = []
    if (own) {
      const s = summarize(gaps)
      figures.push(
        { scenario: 'replace-after-timeout', name: `timeout result → next call answered, max of ${s.n}`, value: s.max, unit: 's', target: { op: '<=', value: 0.5 } },
        { scenario: 'replace-after-timeout', name: `timeout result → next call answered, p50 of ${s.n}`, value: s.p50, unit: 's' }
      )
    }
    figures.push({ scenario: 'replace-after-timeout', name: `runner: out of service → replacement ready, mean of ${replaced}`, value: replaced > 0 ? (after.sum - before.sum) / replaced : NaN, unit: 's', ...(own ? {} : { target: { op: '<=' as const, value: 0.5 } }) })
    return {
      figures,
      runs: [],
      notes: [fleetNote(server), ...problems.map((p) => `replace-after-timeout: ${p}`)]
    }
  }
}
