/**
 * The harness's statistics: nearest-rank percentiles of latency samples and counts of outcomes
 * by key. Kept apart from the load generator so that a test can check them on known inputs.
 */

/** Summary of a set of samples (milliseconds in this harness); NaN fields when it is empty. */
export interface Summary {
  n: number
  min: number
  mean: number
  p50: number
  p90: number
  p99: number
  max: number
}

/**
 * The nearest-rank percentile of ascending `sorted`: the smallest sample such that at least
 * `p` (0 < p ≤ 1) of the samples are ≤ it. p50 of [1, 2, 3, 4] is 2; p99 of 1..100 is 99.
 * NaN for no samples.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!(p > 0 && p <= 1)) throw new RangeError(`percentile: p must be in (0, 1], got ${p}`)
  if (sorted.length === 0) return NaN
  const rank = Math.ceil(p * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]
}

/** The nearest-rank median of `samples` (not modified): the lower middle one; NaN for none. */
export function median(samples: readonly number[]): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    0.5
  )
}

/** Summarises `samples` (not modified; a sorted copy is made). */
export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort()
  const xs = Array.from(sorted)
  const n = xs.length
  let sum = 0
  for (const x of xs) sum += x
  return {
    n,
    min: n === 0 ? NaN : xs[0],
    mean: n === 0 ? NaN : sum / n,
    p50: percentile(xs, 0.5),
    p90: percentile(xs, 0.9),
    p99: percentile(xs, 0.99),
    max: n === 0 ? NaN : xs[n - 1]
  }
}

/** Counts outcomes by key (`ok`, `timeout`, `http_429`, `transport_ECONNRESET`, …). */
export class OutcomeCounter {
  readonly #counts = new Map<string, number>()
  #total = 0

  /** Adds `n` occurrences of `key`. */
  add(key: string, n = 1): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + n)
    this.#total += n
  }

  /** Occurrences of `key` (0 when never added). */
  get(key: string): number {
    return this.#counts.get(key) ?? 0
  }

  /** Every occurrence counted. */
  get total(): number {
    return this.#total
  }

  /** Occurrences whose key is not `okKey`: each one is a failure. */
  failures(okKey = 'ok'): number {
    return this.#total - this.get(okKey)
  }

  /** The counts as a plain object, keys sorted by count (largest first), then by name. */
  toObject(): Record<string, number> {
    const entries = [...this.#counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    return Object.fromEntries(entries)
  }
}
