/**
 * The report of a product run: the figures (accounting, latency, rate, the fleet's peak memory,
 * the thresholds' verdicts) with where they were taken, as one JSON document or as Markdown; the
 * HTML form is html-report.ts.
 */
import type { Environment } from '../environment.ts'
import { environmentBlock, formatNumber } from '../report.ts'
import { summarize, type Summary } from '../stats.ts'
import type { Accounting } from './ledger.ts'
import type { RunResult, Sample } from './engine.ts'
import type { SoakHealth } from './health.ts'
import { checkThresholds, type Threshold, type ThresholdResult } from './thresholds.ts'
import { classLatencies, efficiencyFigures, efficiencyRows, type Efficiency } from './efficiency.ts'

/** A fleet process's peak memory (the kernel's high-water mark, VmHWM). */
export interface ProcessPeak {
  name: string
  pid: number
  peakRssMiB: number
}

/** What the run was. */
export interface RunSetup {
  mode: 'step' | 'closed' | 'open' | 'soak'
  target: string
  path: string
  workload: string
  fleet: string
  calls?: number
  batchSize?: number
  connections: number
  rate?: number
  durationS?: number
}

/** A histogram of latencies: `counts[i]` samples in [edgesMs[i], edgesMs[i+1]). */
export interface Histogram {
  edgesMs: number[]
  counts: number[]
}

/** The whole report; its CPU, replacements and latency by class (efficiency.ts) when measured. */
export interface ProductReport extends Efficiency {
  environment: Environment
  setup: RunSetup
  accounting: Accounting
  latencyMs: Summary
  /** Answered calls per second over the run. */
  rate: number
  elapsedS: number
  requests: number
  histogram: Histogram
  samples: Sample[]
  memory: ProcessPeak[]
  /** `soak`: what the run left behind in the fleet's processes. */
  health?: SoakHealth
  /** The reuse isolation level's counters over the run (reuse-counters.ts), when any moved. */
  reuse?: string
  thresholds: ThresholdResult[]
}

/** Log-spaced buckets from the smallest latency to the largest (`buckets` of them). */
export function histogram(latencies: readonly number[], buckets = 40): Histogram {
  if (latencies.length === 0) return { edgesMs: [], counts: [] }
  let lo = Infinity
  let hi = -Infinity
  for (const x of latencies) {
    if (x < lo) lo = x
    if (x > hi) hi = x
  }
  lo = Math.max(0.01, lo)
  hi = Math.max(hi, lo * 1.01)
  const ratio = Math.log(hi / lo) / buckets
  const edgesMs = Array.from({ length: buckets + 1 }, (_, i) => lo * Math.exp(ratio * i))
  const counts = new Array<number>(buckets).fill(0)
  for (const x of latencies)
    counts[Math.min(buckets - 1, Math.max(0, Math.floor(Math.log(Math.max(x, lo) / lo) / ratio)))]++
  return { edgesMs, counts }
}

/** The figures thresholds may name. */
export function thresholdFigures(
  r: Pick<ProductReport, 'accounting' | 'latencyMs' | 'rate' | 'elapsedS'>
): Record<string, number> {
  const a = r.accounting
  return {
    p50: r.latencyMs.p50,
    p90: r.latencyMs.p90,
    p99: r.latencyMs.p99,
    max: r.latencyMs.max,
    mean: r.latencyMs.mean,
    rate: r.rate,
    duration_s: r.elapsedS,
    calls: a.calls,
    right: a.right,
    wrong: a.wrong,
    failed: a.failed,
    retriable: a.retriable,
    lost: a.lost,
    duplicated: a.duplicated,
    misrouted: a.misrouted
  }
}

/** Builds the report from a run (`efficiency`: its CPU and replacements, when measured). */
export function buildReport(
  environment: Environment,
  setup: RunSetup,
  run: RunResult,
  memory: ProcessPeak[],
  thresholds: readonly Threshold[],
  health?: SoakHealth,
  efficiency: Efficiency = {}
): ProductReport {
  const latencyMs = summarize(run.latencyMs)
  const rate = run.elapsedS > 0 ? run.accounting.answered / run.elapsedS : 0
  const partial = { accounting: run.accounting, latencyMs, rate, elapsedS: run.elapsedS }
  const measured: Efficiency = { ...efficiency, classes: classLatencies(run.latencyByClass) }
  return {
    environment,
    setup,
    ...partial,
    requests: run.requests,
    histogram: histogram(run.latencyMs),
    samples: run.samples,
    memory,
    ...(health === undefined ? {} : { health }),
    ...measured,
    thresholds: checkThresholds(thresholds, {
      ...thresholdFigures(partial),
      ...health?.figures,
      ...efficiencyFigures(measured)
    })
  }
}

/** One line saying what ran: `step of 45,000 calls, batches of 64 over 32 connections → /v1/execute/batch`. */
export function describeSetup(s: RunSetup): string {
  const unit = s.batchSize !== undefined && s.batchSize > 1 ? `batches of ${s.batchSize}` : 'single calls'
  const what =
    s.mode === 'step'
      ? `step of ${(s.calls ?? 0).toLocaleString('en-US')} calls released at once, ${unit} over ${s.connections} connections`
      : s.mode === 'soak'
        ? `soak of ${(s.calls ?? 0).toLocaleString('en-US')} calls through one runner, ${s.connections} requests in flight (${unit})`
        : s.mode === 'closed'
          ? `closed loop, ${s.connections} requests in flight (${unit}) for ${s.durationS ?? 0} s`
          : `open loop at ${s.rate ?? 0} calls/s (${unit}, ${s.connections} connections) for ${s.durationS ?? 0} s`
  return `${what} → ${s.target} (${s.path}); workload: ${s.workload}`
}

/** The lingering zombies grouped by place: ` (bwrap>python3>python3, its parent S: ×2, longest 3 s; …)`. */
function lingeringWhere(lingering: SoakHealth['lingering']): string {
  if (lingering.length === 0) return ''
  const groups = new Map<string, { n: number; longestS: number }>()
  for (const z of lingering) {
    const key = `${z.chain}, its parent ${z.parentState}`
    const g = groups.get(key) ?? { n: 0, longestS: 0 }
    g.n++
    g.longestS = Math.max(g.longestS, z.seenS)
    groups.set(key, g)
  }
  return ` (${[...groups].map(([where, g]) => `${where}: ×${g.n}, longest ${formatNumber(g.longestS)} s`).join('; ')})`
}

/** A soak's growth figure, or why it has none. */
function growthFigure(x: number | null, unit: string): string {
  return x === null ? 'none: too few calls for a sample in both windows' : `${formatNumber(x)}${unit}`
}

function healthRows(h: SoakHealth): Array<[string, string]> {
  const f = h.figures
  const last = h.samples[h.samples.length - 1]
  const rest = (s: SoakHealth['before']): string =>
    `${s.sandboxes} sandboxes, ${s.processes} processes${s.containers > 0 ? `, ${s.containers} containers` : ''}, ${s.zombies} zombies`
  return [
    [
      'soak: runner RSS growth after warm-up',
      `${growthFigure(f.rss_growth_pct, ' %')} (now ${formatNumber(last?.runnerRssMiB ?? NaN)} MiB)`
    ],
    [
      'soak: gateway RSS growth after warm-up',
      `${growthFigure(f.gateway_rss_growth_pct, ' %')} (now ${formatNumber(last?.gatewayRssMiB ?? NaN)} MiB)`
    ],
    [
      'soak: runner open descriptors, growth after warm-up',
      `${growthFigure(f.fd_growth, '')} (now ${last?.runnerFds ?? '?'})`
    ],
    ['soak: zombies left unreaped', String(f.zombies)],
    ['soak: zombies reaped late (seen a second apart)', String(f.late_reaps) + lingeringWhere(h.lingering)],
    ['soak: the runner at rest, before → after', `${rest(h.before)} → ${rest(h.after)}`],
    ['soak: leaked sandboxes', String(f.leaked_sandboxes)]
  ]
}

/** The report as Markdown (for RESULTS.md or a terminal). */
export function markdownReport(r: ProductReport): string {
  const a = r.accounting
  const l = r.latencyMs
  const rows: Array<[string, string]> = [
    ['calls', a.calls.toLocaleString('en-US')],
    ['answered right', a.right.toLocaleString('en-US')],
    [
      'wrong',
      String(a.wrong) +
        (a.wrong > 0
          ? ` (${Object.entries(a.wrongBy)
              .map(([k, n]) => `${k}: ${n}`)
              .join(', ')})`
          : '')
    ],
    ['failed (not run by the fleet)', `${a.failed} (${a.retriable} retriable)`],
    ['lost', String(a.lost)],
    ['duplicated', String(a.duplicated)],
    ['misrouted', String(a.misrouted)],
    [
      'answers by status',
      Object.entries(a.statuses)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    ],
    ['time, first send to last answer', `${formatNumber(r.elapsedS)} s`],
    ['answered calls/s', formatNumber(r.rate)],
    [
      'latency p50 / p90 / p99 / max',
      `${formatNumber(l.p50)} / ${formatNumber(l.p90)} / ${formatNumber(l.p99)} / ${formatNumber(l.max)} ms`
    ],
    ['requests', r.requests.toLocaleString('en-US')],
    ...efficiencyRows(r),
    ...r.memory.map((m): [string, string] => [
      `peak RSS, ${m.name} (pid ${m.pid})`,
      `${formatNumber(m.peakRssMiB)} MiB`
    ]),
    ...(r.health === undefined ? [] : healthRows(r.health)),
    ...(r.reuse === undefined
      ? []
      : [['reuse level: jobs by the level they ran at, processes retired', r.reuse] as [string, string]]),
    ...r.thresholds.map((t): [string, string] => [
      `threshold \`${t.text}\``,
      `${t.passed ? 'passed' : 'FAILED'} (${t.actual === null ? 'no figure' : formatNumber(t.actual)})`
    ])
  ]
  return [
    `# sandfleet bench: ${describeSetup(r.setup)}`,
    '',
    environmentBlock(r.environment),
    `- fleet: ${r.setup.fleet}`,
    '',
    '| figure | value |',
    '| --- | --- |',
    ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    ''
  ].join('\n')
}
