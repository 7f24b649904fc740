/**
 * Pass/fail criteria of a run, k6 style: `--threshold 'p99<2000' --threshold 'wrong==0'`. A
 * threshold is a metric, a comparison and a number; the run exits non-zero when one fails.
 */

/** The metrics a threshold may name, and what each is. */
export const METRICS: Readonly<Record<string, string>> = {
  p50: 'latency p50, ms',
  p90: 'latency p90, ms',
  p99: 'latency p99, ms',
  max: 'latency max, ms',
  mean: 'latency mean, ms',
  rate: 'answered calls per second',
  duration_s: 'seconds from the first send to the last answer',
  calls: 'calls sent',
  right: 'calls answered right (expected status and stdout)',
  wrong: 'calls answered wrong',
  failed: 'calls the fleet did not run (fleet status, HTTP or transport error)',
  retriable: 'failed calls with a retriable answer (overloaded, queue_timeout, infra_error, 429, 503)',
  lost: 'calls never answered',
  duplicated: 'extra answers to calls already answered',
  misrouted: "answers carrying another call's nonce",
  useful_share_pct: "the calls' own CPU (sum of cpu_ms) over all the CPU the fleet used, in %",
  replacements: 'sandboxes the fleet replaced during the run (any reason)',
  rss_growth_pct: "soak: the runner's RSS, last tenth of the run over just after warm-up, growth in %",
  gateway_rss_growth_pct: "soak: the gateway's RSS, the same, in %",
  fd_growth: "soak: the runner's open descriptors, last tenth less just after warm-up",
  zombies: 'soak: processes left unreaped (zombies for longer than the longest job may last, or at rest after the run)',
  late_reaps: "soak: zombies seen in two samples a second apart, reaped within the longest job's time",
  leaked_sandboxes: "soak: sandboxes (the runner's child processes) and containers at rest after the run less before it"
}

type Op = '<=' | '>=' | '==' | '!=' | '<' | '>'

/** One parsed threshold. */
export interface Threshold {
  text: string
  metric: string
  op: Op
  value: number
}

/** A threshold and whether the run met it. */
export interface ThresholdResult extends Threshold {
  /** The run's figure; null when the run has none (a soak too short for a growth figure): then it failed. */
  actual: number | null
  passed: boolean
}

/** Parses `p99<2000`; throws naming the problem. */
export function parseThreshold(text: string): Threshold {
  const m = /^\s*([a-z0-9_]+)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(text)
  if (m === null)
    throw new Error(`--threshold ${JSON.stringify(text)}: expected METRIC OP NUMBER, e.g. 'p99<2000' or 'wrong==0'`)
  if (METRICS[m[1]] === undefined)
    throw new Error(
      `--threshold ${JSON.stringify(text)}: unknown metric ${m[1]} (known: ${Object.keys(METRICS).join(', ')})`
    )
  return { text: text.trim(), metric: m[1], op: m[2] as Op, value: Number(m[3]) }
}

function holds(actual: number, op: Op, value: number): boolean {
  switch (op) {
    case '<':
      return actual < value
    case '<=':
      return actual <= value
    case '>':
      return actual > value
    case '>=':
      return actual >= value
    case '==':
      return actual === value
    case '!=':
      return actual !== value
  }
}

/** Checks each threshold against the run's figures (a missing figure, null or NaN, fails). */
export function checkThresholds(
  thresholds: readonly Threshold[],
  figures: Readonly<Record<string, number | null>>
): ThresholdResult[] {
  return thresholds.map((t) => {
    const figure = figures[t.metric]
    const actual = figure === undefined || figure === null || !Number.isFinite(figure) ? null : figure
    return { ...t, actual, passed: actual !== null && holds(actual, t.op, t.value) }
  })
}
