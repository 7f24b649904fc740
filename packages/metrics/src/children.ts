/**
 * Label children for hot paths. prom-client 15's own children (`metric.labels(...)`) only bind
 * the label object: each `inc` or `observe` still validates the labels, builds their hash string
 * and looks it up. A child made here finds its series once, the first time it is updated,
 * through the metric's own method, and then updates that series in place (the costs of both:
 * benchmarks/RESULTS.md, "The batch path's CPU per item"), reading it from the metric each
 * time: a `reset()` or `remove()` of the metric is seen, never a stale series. The exposition
 * is prom-client's, unchanged.
 *
 * The in-place update relies on prom-client 15's storage (`hashMap` of `{labels, value}` or
 * `{labels, bucketValues, sum, count}`); a metric that does not look like it (another major
 * version, exemplars enabled) gets a child that simply calls the metric's own method, and the
 * package's test compares both paths series by series.
 */
import type { Counter, Histogram, LabelValues } from 'prom-client'

/** One label set of a Counter. */
export interface CounterChild {
  /** Adds `value` (default 1; finite, never negative). */
  inc(value?: number): void
}

/** One label set of a Histogram. */
export interface HistogramChild {
  /** Counts one observation of `value` (finite). */
  observe(value: number): void
}

interface CounterSeries {
  labels: object
  value: number
}
interface HistogramSeries {
  labels: object
  sum: number
  count: number
  bucketValues: Record<string, number>
}
/** What prom-client 15 keeps per metric (not part of its typed API). */
interface Storage<S> {
  hashMap?: Record<string, S | undefined>
  enableExemplars?: boolean
  upperBounds?: readonly number[]
}

function sameLabels(a: object, b: Readonly<Record<string, unknown>>): boolean {
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) if (String((a as Record<string, unknown>)[k]) !== String(b[k])) return false
  return true
}

/**
 * The key of the series labelled `labels` in `storage`, once the metric's own method made it; undefined when the
 * storage is not prom-client 15's.
 */
function seriesKey<S extends { labels: object }>(
  storage: Storage<S>,
  labels: Readonly<Record<string, unknown>>,
  looksRight: (s: S) => boolean
): string | undefined {
  const map = storage.hashMap
  if (map === undefined || map === null || typeof map !== 'object') return undefined
  for (const key of Object.keys(map)) {
    const series = map[key]
    if (series !== undefined && sameLabels(series.labels, labels)) return looksRight(series) ? key : undefined
  }
  return undefined
}

/**
 * A child of `counter` for `labels` (every label name of the counter, no other). Invalid labels
 * throw at the first `inc`, as prom-client's own would.
 */
export function counterChild<T extends string>(counter: Counter<T>, labels: LabelValues<T>): CounterChild {
  const storage = counter as unknown as Storage<CounterSeries>
  let key: string | undefined
  let fast = storage.enableExemplars !== true
  return {
    inc(value = 1): void {
      const series = key === undefined ? undefined : storage.hashMap?.[key]
      if (series === undefined || !fast) {
        counter.inc(labels, value)
        if (fast) {
          key = seriesKey(storage, labels, (s) => typeof s.value === 'number')
          fast = key !== undefined
        }
        return
      }
      if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
      if (value < 0) throw new Error('It is not possible to decrease a counter')
      series.value += value
    }
  }
}

/**
 * A child of `histogram` for `labels` (every label name of the histogram, no other). Invalid
 * labels throw at the first `observe`, as prom-client's own would.
 */
export function histogramChild<T extends string>(histogram: Histogram<T>, labels: LabelValues<T>): HistogramChild {
  const storage = histogram as unknown as Storage<HistogramSeries>
  const bounds = Array.isArray(storage.upperBounds) ? storage.upperBounds : []
  // The bucket keys as prom-client writes them (String(bound)), made once rather than per observation.
  const keys = bounds.map(String)
  let key: string | undefined
  let fast = storage.enableExemplars !== true && bounds.length > 0
  return {
    observe(value: number): void {
      const series = key === undefined ? undefined : storage.hashMap?.[key]
      if (series === undefined || !fast) {
        histogram.observe(labels, value)
        if (fast) {
          key = seriesKey(
            storage,
            labels,
            (s) =>
              typeof s.sum === 'number' &&
              typeof s.count === 'number' &&
              typeof s.bucketValues === 'object' &&
              keys.every((k) => typeof s.bucketValues[k] === 'number')
          )
          fast = key !== undefined
        }
        return
      }
      if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`)
      series.sum += value
      series.count += 1
      for (let i = 0; i < bounds.length; i++) {
        if (value <= bounds[i]) {
          series.bucketValues[keys[i]] += 1
          return
        }
      }
    }
  }
}
