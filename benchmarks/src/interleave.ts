/**
 * Calls compared side by side: one connection, the calls sent in turn (a round is one of each,
 * each round starting at the next call, so none always follows the same one), for `warmupS`
 * and then `durationS`. A round counts when it ran whole inside the recorded window. On a
 * machine shared with other work, the load falls on every call alike, so their differences and
 * ratios hold where their absolute times do not.
 */
import { Pool } from 'undici'
import type { Classifier, ResultTimes } from './load.ts'
import { OutcomeCounter, summarize, type Summary } from './stats.ts'

/** One of the calls compared. */
export interface InterleavedCall {
  name: string
  path: string
  /** JSON body of a `POST`; undefined for a `GET`. */
  body: string | undefined
  classify: Classifier
}

/** What the rounds measured, per call, in the order given. */
export interface InterleavedReport {
  /** Latency of each recorded round's call, in ms (index j is round j for every call). */
  times: number[][]
  latencyMs: Summary[]
  /** The results' `duration_ms`, where the response has one. */
  runMs: Summary[]
  counts: Array<Record<string, number>>
  failures: number[]
}

/** Runs the rounds; see the module comment. */
export async function runInterleaved(
  url: string,
  calls: readonly InterleavedCall[],
  shape: { durationS: number; warmupS: number }
): Promise<InterleavedReport> {
  const pool = new Pool(url, { connections: 1, pipelining: 1, keepAliveTimeout: 60_000 })
  const times: number[][] = calls.map(() => [])
  const runMs: number[][] = calls.map(() => [])
  const counts = calls.map(() => new OutcomeCounter())
  const headers = { 'content-type': 'application/json' }
  try {
    const recordFrom = performance.now() + shape.warmupS * 1000
    const stopAt = recordFrom + shape.durationS * 1000
    for (let round = 0; performance.now() < stopAt; round++) {
      const roundStart = performance.now()
      const sample: number[] = []
      const outcomes: string[] = []
      const run: ResultTimes[] = []
      for (let k = 0; k < calls.length; k++) {
        const i = (round + k) % calls.length
        const c = calls[i]
        run[i] = { runMs: [], queueMs: [], cpuMs: [] }
        const t0 = performance.now()
        const res =
          c.body === undefined
            ? await pool.request({ origin: url, path: c.path, method: 'GET' })
            : await pool.request({ origin: url, path: c.path, method: 'POST', headers, body: c.body })
        const text = await res.body.text()
        sample[i] = performance.now() - t0
        outcomes[i] = c.classify(res.statusCode, text, run[i])[0] ?? 'bad_response'
      }
      if (roundStart >= recordFrom && performance.now() <= stopAt) {
        for (let i = 0; i < calls.length; i++) {
          times[i].push(sample[i])
          counts[i].add(outcomes[i])
          runMs[i].push(...run[i].runMs)
        }
      }
    }
  } finally {
    await pool.destroy()
  }
  return {
    times,
    latencyMs: times.map((xs) => summarize(xs)),
    runMs: runMs.map((xs) => summarize(xs)),
    counts: counts.map((c) => c.toObject()),
    failures: counts.map((c) => c.failures())
  }
}

/** The median of the differences `a[j] - b[j]` (same round). */
export function medianPairedDifference(a: readonly number[], b: readonly number[]): number {
  const d = a.map((x, j) => x - b[j]).sort((x, y) => x - y)
  return d.length === 0 ? NaN : d[Math.floor((d.length - 1) / 2)]
}
