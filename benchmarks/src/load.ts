/**
 * A closed-loop load generator on undici: `concurrency` workers each send one request, wait for
 * the whole response, and send the next, for `warmupS` (not recorded) and then `durationS`
 * (recorded). A call completed inside the recorded window counts, with its latency; a call whose
 * outcome is not `ok` is a failure and is counted by its outcome. In batch mode a request carries
 * `batchSize` calls and every item's status is counted.
 */
import { Pool } from 'undici'
import { OutcomeCounter, summarize, type Summary } from './stats.ts'

/** What one request is, and how its response becomes outcomes. */
export interface LoadTarget {
  /** Base URL of the fleet, e.g. `http://127.0.0.1:8080`. */
  url: string
  /** `/v1/execute` or `/v1/execute/batch`. */
  path: string
  /** JSON body sent with every request. */
  body: string
  /** Calls one request carries (1, or the batch size). */
  callsPerRequest: number
  /** Outcome keys of one response, one per call (`ok` for a success); see {@link classifyExecute}. */
  classify: (statusCode: number, body: string) => string[]
}

/** How hard and how long. */
export interface LoadShape {
  /** Requests in flight at once. */
  concurrency: number
  /** Recorded seconds. */
  durationS: number
  /** Seconds before recording starts (sandboxes warm, connections open, JIT). */
  warmupS: number
  /** Keep-alive connections of the pool (default: `concurrency`, so no request waits for one). */
  connections?: number
}

/** What a run measured. */
export interface LoadReport {
  concurrency: number
  callsPerRequest: number
  /** Actual recorded window, in seconds. */
  windowS: number
  /** Requests completed in the window. */
  requests: number
  /** Calls completed in the window (requests × calls per request). */
  calls: number
  /** Calls whose outcome was `ok`. */
  okCalls: number
  /** Calls whose outcome was anything else. */
  failures: number
  /** `ok` calls per second: the throughput figure. */
  okCallsPerS: number
  /** Latency of one request (a whole batch in batch mode), in ms, nearest-rank percentiles. */
  latencyMs: Summary
  /** Calls by outcome: result status, `http_NNN`, `transport_CODE`, `wrong_output`. */
  counts: Record<string, number>
}

/**
 * Outcome of one `/v1/execute` response: its result `status` (an HTTP error is `http_NNN`), or
 * `wrong_output` when the status is `ok` but stdout is not `expectStdout`.
 */
export function classifyExecute (expectStdout?: string): (statusCode: number, body: string) => string[] {
  return (statusCode, body) => {
    if (statusCode !== 200) return [`http_${statusCode}`]
    return [outcomeOf(parse(body), expectStdout)]
  }
}

/** Outcomes of one `/v1/execute/batch` JSON response, one per item; `http_NNN` for each on an HTTP error. */
export function classifyBatch (size: number, expectStdout?: string): (statusCode: number, body: string) => string[] {
  return (statusCode, body) => {
    if (statusCode !== 200) return new Array<string>(size).fill(`http_${statusCode}`)
    const results = (parse(body) as { results?: unknown[] } | undefined)?.results
    if (!Array.isArray(results)) return new Array<string>(size).fill('bad_response')
    const out = results.map((r) => outcomeOf(r, expectStdout))
    while (out.length < size) out.push('missing_result')
    return out
  }
}

function parse (body: string): unknown {
  try { return JSON.parse(body) } catch { return undefined }
}

function outcomeOf (result: unknown, expectStdout: string | undefined): string {
  const r = result as { status?: unknown, stdout?: unknown } | undefined
  if (typeof r?.status !== 'string') return 'bad_response'
  if (r.status === 'ok' && expectStdout !== undefined && r.stdout !== expectStdout) return 'wrong_output'
  return r.status
}

/** Runs the closed loop; see the module comment. */
export async function runLoad (target: LoadTarget, shape: LoadShape): Promise<LoadReport> {
  const pool = new Pool(target.url, { connections: shape.connections ?? shape.concurrency, pipelining: 1, keepAliveTimeout: 60_000 })
  const latencies: number[] = []
  const counts = new OutcomeCounter()
  let requests = 0
  const start = performance.now()
  const recordFrom = start + shape.warmupS * 1000
  const stopAt = recordFrom + shape.durationS * 1000
  const headers = { 'content-type': 'application/json' }

  const worker = async (): Promise<void> => {
    while (performance.now() < stopAt) {
      const t0 = performance.now()
      let outcomes: string[]
      try {
        const res = await pool.request({ origin: target.url, path: target.path, method: 'POST', headers, body: target.body })
        outcomes = target.classify(res.statusCode, await res.body.text())
      } catch (err) {
        const code = (err as { code?: string }).code ?? (err as Error).name
        outcomes = new Array<string>(target.callsPerRequest).fill(`transport_${code}`)
      }
      const t1 = performance.now()
      if (t1 >= recordFrom && t1 <= stopAt) {
        requests++
        latencies.push(t1 - t0)
        for (const o of outcomes) counts.add(o)
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: shape.concurrency }, worker))
  } finally {
    await pool.close()
  }
  const windowS = shape.durationS
  const okCalls = counts.get('ok')
  return {
    concurrency: shape.concurrency,
    callsPerRequest: target.callsPerRequest,
    windowS,
    requests,
    calls: counts.total,
    okCalls,
    failures: counts.failures(),
    okCallsPerS: okCalls / windowS,
    latencyMs: summarize(latencies),
    counts: counts.toObject()
  }
}
