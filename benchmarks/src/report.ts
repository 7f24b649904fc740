/**
 * Figures, their targets and the markdown tables that go into RESULTS.md. A missed target is
 * said as the factor it misses by (measured/target for a ceiling, target/measured for a floor).
 */
import type { Environment } from './environment.ts'
import type { LoadReport } from './load.ts'

/** A target: the figure must be at most (`<=`) or at least (`>=`) `value`. */
export interface Target {
  op: '<=' | '>='
  value: number
}

/** One figure a scenario produced. */
export interface Figure {
  scenario: string
  /** What was measured, e.g. `print(1+1) p50 at concurrency 1`. */
  name: string
  value: number
  /** `ms`, `calls/s`, `s`, `×`. */
  unit: string
  target?: Target
}

/** One closed-loop run, with the server it ran against. */
export interface LoadRun {
  scenario: string
  /** `sandfleet` or `naive`, and any variant (`sandfleet poolSize=4`). */
  server: string
  /** The calls it sent (`print(1+1)`, `sympy.factor`), for a scenario whose runs send more than one kind. */
  workload?: string
  report: LoadReport
}

/** What a scenario returns. */
export interface ScenarioResult {
  figures: Figure[]
  runs: LoadRun[]
  /** Anything a reader of the figures must know (servers started, isolation, caveats). */
  notes: string[]
}

/** A scenario's result, empty: it pushes its figures, runs and notes as it goes. */
export function emptyResult(): ScenarioResult {
  return { figures: [], runs: [], notes: [] }
}

/** `met`, `missed by 1.6×`, or `` without a target. */
export function verdict(figure: Figure): string {
  const { target, value } = figure
  if (target === undefined) return ''
  if (!Number.isFinite(value) || value <= 0)
    return target.op === '>=' || !Number.isFinite(value) ? 'missed (no value)' : 'met'
  const met = target.op === '<=' ? value <= target.value : value >= target.value
  if (met) return 'met'
  const factor = target.op === '<=' ? value / target.value : target.value / value
  return `missed by ${factor.toFixed(2)}×`
}

/** A number for a table: 3 significant digits under 100, whole numbers with separators above. */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return 'n/a'
  if (Math.abs(x) >= 100) return Math.round(x).toLocaleString('en-US')
  return Number(x.toPrecision(3)).toString()
}

const formatValue = (value: number, unit: string): string =>
  !Number.isFinite(value) ? 'n/a' : unit === '×' ? `${formatNumber(value)}×` : `${formatNumber(value)} ${unit}`

/** The figures as a markdown table: scenario, figure, measured, target, verdict. */
export function figuresTable(figures: readonly Figure[]): string {
  const rows = figures.map(
    (f) =>
      `| ${f.scenario} | ${f.name} | ${formatValue(f.value, f.unit)} | ${f.target === undefined ? '' : `${f.target.op === '<=' ? '≤' : '≥'} ${formatValue(f.target.value, f.unit)}`} | ${verdict(f)} |`
  )
  return ['| scenario | figure | measured | target | verdict |', '| --- | --- | --- | --- | --- |', ...rows].join('\n')
}

/**
 * The load runs as a markdown table: throughput, latency percentiles (client side), the fleet's
 * own p50 run and queue times (`duration_ms`, `queue_ms` of the results), every outcome count,
 * the server's CPU per call (its whole process tree: the node process, with the share of its
 * main thread, its live children such as bubblewrap and the executors, and the children that
 * exited, such as the jobs), the useful share (the results' own `cpu_ms` over that CPU; n/a for
 * a server whose results carry none, a peer: its share is a figure of the scenario that runs it,
 * from sandfleet's `cpu_ms` for the same calls) and the
 * machine's CPU over the window (100 % = every core).
 */
export function runsTable(runs: readonly LoadRun[]): string {
  // A workload column when a run names its workload: the rows of one scenario may send different calls.
  const named = runs.some((run) => run.workload !== undefined)
  const rows = runs.map(({ scenario, server, workload, report: r }) => {
    const counts =
      Object.entries(r.counts)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    const cpu =
      r.cpu?.machineBusyPct === undefined
        ? 'n/a'
        : `${r.cpu.machineBusyPct} (${r.cpu.machineKernelPct ?? '?'} kernel), harness ${r.cpu.harnessPct}`
    let fleetCpu = 'n/a'
    if (r.serverCpuMsPerCall !== undefined && r.cpu?.serverUserMs !== undefined && r.cpu.serverKernelMs !== undefined) {
      const total = Math.max(1, r.cpu.serverUserMs + r.cpu.serverKernelMs)
      const share = (ms: number | undefined): number => Math.round((100 * (ms ?? 0)) / total)
      const root = share(r.cpu.serverRootMs)
      const reaped = share(r.cpu.serverReapedMs)
      const main = r.cpu.serverMainThreadMs === undefined ? '' : ` (main thread ${share(r.cpu.serverMainThreadMs)} %)`
      fleetCpu = `${formatNumber(r.serverCpuMsPerCall)} (kernel ${share(r.cpu.serverKernelMs)} %; node ${root} %${main}, live children ${Math.max(0, 100 - root - reaped)} %, exited children ${reaped} %)`
    }
    const useful = r.usefulShare === undefined ? 'n/a' : `${(Math.round(r.usefulShare * 1000) / 10).toFixed(1)} %`
    return `| ${scenario} |${named ? ` ${workload ?? ''} |` : ''} ${server} | ${r.concurrency}${r.callsPerRequest > 1 ? ` × ${r.callsPerRequest}` : ''} | ${formatNumber(r.okCallsPerS)} | ${formatNumber(r.latencyMs.p50)} | ${formatNumber(r.latencyMs.p90)} | ${formatNumber(r.latencyMs.p99)} | ${formatNumber(r.runMs.p50)} / ${formatNumber(r.queueMs.p50)} | ${r.failures} | ${counts} | ${fleetCpu} | ${useful} | ${cpu} |`
  })
  return [
    `| scenario |${named ? ' workload |' : ''} server | in flight | ok calls/s | p50 ms | p90 ms | p99 ms | run / queue p50 ms | failures | outcomes | server CPU ms/call | useful share | machine CPU % |`,
    `| --- |${named ? ' --- |' : ''} --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |`,
    ...rows
  ].join('\n')
}

/** The header printed above every set of figures. */
export function environmentBlock(env: Environment): string {
  const m = env.machine
  return [
    `- command: \`${env.command}\``,
    `- date: ${env.date}, commit ${env.commit}`,
    `- machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.kernel}, node ${m.node}, load average ${m.loadAverage1m} at start, CPU ${m.backgroundBusyPct ?? '?'} % busy in the second before the run (shared machine), fork probe ${m.forkProbeUs ?? '?'} µs (CPU of one fork + exit of a bare python3)`
  ].join('\n')
}
