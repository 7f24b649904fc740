/**
 * Where a run's CPU went, for its report: the calls' own CPU (the sum of their results' `cpu_ms`,
 * the kernel's figure for each job) against all the CPU the fleet used meanwhile (fleet-cpu.ts):
 * the **useful share**; the sandboxes the fleet replaced, by reason; and the latency of each class
 * of call (the mix's ordinary calls, the long ones, the time-outs).
 */
import { formatNumber } from '../report.ts'
import type { FleetCpuUsed } from '../fleet-cpu.ts'
import { summarize } from '../stats.ts'

/** The calls' own CPU against the fleet's. */
export interface RunCpu {
  /** Sum of the first answers' `cpu_ms`, ms. */
  callsMs: number
  /** First answers that carried a `cpu_ms`. */
  measuredCalls: number
  /** All the CPU the fleet used over the run, ms; null when the harness could not measure it (see `unmeasured`). */
  fleetMs: number | null
  /** Of `fleetMs`: its process trees' and (docker) its containers'. */
  processesMs?: number
  containersMs?: number
  /** `callsMs` ÷ `fleetMs`; null without both. */
  usefulShare: number | null
  /** Why `fleetMs` is null. */
  unmeasured?: string
}

/** The run's CPU figures from the calls' sum and the fleet's measurement (or why there is none). */
export function runCpu(callsMs: number, measuredCalls: number, fleet: FleetCpuUsed | string): RunCpu {
  if (typeof fleet === 'string') return { callsMs, measuredCalls, fleetMs: null, usefulShare: null, unmeasured: fleet }
  const out: RunCpu = {
    callsMs,
    measuredCalls,
    fleetMs: fleet.totalMs,
    processesMs: fleet.processesMs,
    usefulShare: measuredCalls > 0 && fleet.totalMs > 0 ? callsMs / fleet.totalMs : null
  }
  if (fleet.containersMs !== undefined) out.containersMs = fleet.containersMs
  return out
}

/** One class's latency. */
export interface ClassLatency {
  class: string
  calls: number
  p50: number
  p99: number
}

const CLASS_ORDER = ['short', 'long', 'timeout']

/** Each class's calls and p50/p99 (ms), in the order short, long, timeout. */
export function classLatencies(byClass: ReadonlyMap<string, readonly number[]>): ClassLatency[] {
  const rank = (c: string): number => {
    const i = CLASS_ORDER.indexOf(c)
    return i === -1 ? CLASS_ORDER.length : i
  }
  return [...byClass]
    .sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0]))
    .map(([kind, latencies]) => {
      const s = summarize(latencies)
      return { class: kind, calls: latencies.length, p50: s.p50, p99: s.p99 }
    })
}

/** What a report holds of these. */
export interface Efficiency {
  cpu?: RunCpu
  classes?: ClassLatency[]
  /**
   * Sandboxes replaced over the run, by reason (from the runners' /metrics); absent when the fleet has none to read.
   */
  replacements?: Record<string, number>
}

/** The share as a percentage with one decimal. */
export function percent(share: number): string {
  return `${(Math.round(share * 1000) / 10).toFixed(1)} %`
}

/** The report's rows for these figures. */
export function efficiencyRows(r: Efficiency): Array<[string, string]> {
  const rows: Array<[string, string]> = []
  const c = r.cpu
  if (c !== undefined) {
    rows.push([
      "the calls' own CPU (sum of cpu_ms)",
      `${formatNumber(c.callsMs)} ms over ${c.measuredCalls.toLocaleString('en-US')} calls`
    ])
    if (c.fleetMs === null) rows.push(["the fleet's CPU", `not measured: ${c.unmeasured ?? 'unknown'}`])
    else {
      const parts =
        c.containersMs === undefined
          ? ''
          : ` (processes ${formatNumber(c.processesMs ?? 0)} ms, containers ${formatNumber(c.containersMs)} ms)`
      rows.push([
        "the fleet's CPU (gateway, runner, sandboxes, zygotes, replacements)",
        `${formatNumber(c.fleetMs)} ms${parts}`
      ])
    }
    rows.push(["useful share (the calls' CPU ÷ the fleet's)", c.usefulShare === null ? 'n/a' : percent(c.usefulShare)])
  }
  if (r.replacements !== undefined) {
    const moved = Object.entries(r.replacements)
    rows.push([
      'sandboxes replaced, by reason',
      moved.length === 0 ? 'none' : moved.map(([k, n]) => `${k} ${n}`).join(', ')
    ])
  }
  if (r.classes !== undefined && r.classes.length > 1) {
    rows.push([
      'latency p50 / p99 by class',
      r.classes
        .map(
          (k) => `${k.class} (${k.calls.toLocaleString('en-US')}) ${formatNumber(k.p50)} / ${formatNumber(k.p99)} ms`
        )
        .join('; ')
    ])
  }
  return rows
}

/** The figures a threshold may name: `useful_share_pct`, `replacements` (null when not measured). */
export function efficiencyFigures(r: Efficiency): Record<string, number | null> {
  return {
    useful_share_pct: r.cpu?.usefulShare === undefined || r.cpu.usefulShare === null ? null : r.cpu.usefulShare * 100,
    replacements: r.replacements === undefined ? null : Object.values(r.replacements).reduce((a, b) => a + b, 0)
  }
}
