/**
 * A closed-loop load generator on undici: `concurrency` workers each send one request, wait for
 * the whole response, and send the next, for `warmupS` (not recorded) and then `durationS`
 * (recorded). A call completed inside the recorded window counts, with its latency; calls still in
 * flight at the end are aborted and not counted. A call whose outcome is not `ok` is a failure and
 * is counted by its outcome. In batch mode a request carries `batchSize` calls and every item's
 * status is counted.
 */
import { setMaxListeners } from 'node:events'
import { Pool } from 'undici'
import { startCpuMeter, type CpuShare } from './cpu.ts'
import { OutcomeCounter, summarize, type Summary } from './stats.ts'

/** What one request is, and how its response becomes outcomes. */
export interface LoadTarget {
  /** Base URL of the fleet, e.g. `http://127.0.0.1:8080`. */
  url: string
  /** `/v1/execute` or `/v1/execute/batch`. */
  path: string
  /** One path per worker (worker i sends to `paths[i % paths.length]`), e.g. one session each; default `path`. */
  paths?: readonly string[]
  /** JSON body sent with every request (`POST`); undefined for a `GET`. */
  body: string | undefined
  /** The `accept` header, when the response's form depends on it (`application/x-ndjson` for a streamed batch). */
  accept?: string
  /** Calls one request carries (1, or the batch size). */
  callsPerRequest: number
  /** Outcome keys of one response, one per call (`ok` for a success); see {@link classifyExecute}. */
  classify: Classifier
}

/** Server-reported times of the calls in one response (`duration_ms`, `queue_ms`, `cpu_ms` of each result). */
export interface ResultTimes {
  runMs: number[]
  queueMs: number[]
  /** The results' own CPU (`cpu_ms`), where they carry it. */
  cpuMs: number[]
}

/** Turns one response into an outcome key per call, and adds the results' own times to `times`. */
export type Classifier = (statusCode: number, body: string, times?: ResultTimes) => string[]

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
  /** The server's process id, to account its process tree's CPU (see cpu.ts). */
  serverPid?: number
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
  /**
   * The server's CPU (its whole process tree, user + kernel) per call completed, in ms; undefined when not measured.
   */
  serverCpuMsPerCall: number | undefined
  /**
   * The calls' own CPU: the sum of the `cpu_ms` the window's results carried, ms (0 for a server whose results carry
   * none).
   */
  callCpuMs: number
  /** Results in the window that carried a `cpu_ms`. */
  measuredCalls: number
  /** `callCpuMs` ÷ the server's CPU over the window; undefined when either is missing (see {@link usefulShareOf}). */
  usefulShare: number | undefined
  /** Latency of one request (a whole batch in batch mode), in ms, nearest-rank percentiles. */
  latencyMs: Summary
  /** The results' `duration_ms` (run time in the sandbox, as the fleet reports it). */
  runMs: Summary
  /** The results' `queue_ms` (waiting for a sandbox in the runner). */
  queueMs: Summary
  /** Calls by outcome: result status, `http_NNN`, `transport_CODE`, `wrong_output`. */
  counts: Record<string, number>
  /** CPU over the recorded window: the machine's (shared with other work) and the load generator's. */
  cpu: CpuShare | undefined
}

/**
 * Outcome of one `/v1/execute` response: its result `status` (an HTTP error is `http_NNN`), or
 * `wrong_output` when the status is `ok` but stdout is not `expectStdout`.
 */
export function classifyExecute(expectStdout?: string): Classifier {
  return (statusCode, body, times) => {
    if (statusCode !== 200) return [`http_${statusCode}`]
    return [outcomeOf(parse(body), expectStdout, times)]
  }
}

/** Outcome of a plain endpoint (`GET /healthz`): `ok` for HTTP 200, else `http_NNN`. */
export function classifyHttp(): Classifier {
  return (statusCode) => [statusCode === 200 ? 'ok' : `http_${statusCode}`]
}

/** Outcomes of one `/v1/execute/batch` JSON response, one per item; `http_NNN` for each on an HTTP error. */
export function classifyBatch(size: number, expectStdout?: string): Classifier {
  return (statusCode, body, times) => {
    if (statusCode !== 200) return new Array<string>(size).fill(`http_${statusCode}`)
    const results = (parse(body) as { results?: unknown[] } | undefined)?.results
    if (!Array.isArray(results)) return new Array<string>(size).fill('bad_response')
    const out = results.map((r) => outcomeOf(r, expectStdout, times))
    while (out.length < size) out.push('missing_result')
    return out
  }
}

/**
 * Outcomes of one streamed `/v1/execute/batch` response (`{index, result}` per line, completion
 * order), one per item in request order; an item without a line is `missing_result`, a line that
 * is not one `bad_response`.
 */
export function classifyNdjsonBatch(size: number, expectStdout?: string): Classifier {
  return (statusCode, body, times) => {
    if (statusCode !== 200) return new Array<string>(size).fill(`http_${statusCode}`)
    const out = new Array<string>(size).fill('missing_result')
    for (const line of body.split('\n')) {
      if (line === '') continue
      const item = parse(line) as { index?: unknown; result?: unknown } | undefined
      const i = item?.index
      if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= size || out[i] !== 'missing_result')
        return new Array<string>(size).fill('bad_response')
      out[i] = outcomeOf(item?.result, expectStdout, times)
    }
    return out
  }
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

function outcomeOf(result: unknown, expectStdout: string | undefined, times: ResultTimes | undefined): string {
  const r = result as
    { status?: unknown; stdout?: unknown; duration_ms?: unknown; queue_ms?: unknown; cpu_ms?: unknown } | undefined
  if (typeof r?.status !== 'string') return 'bad_response'
  if (times !== undefined && typeof r.duration_ms === 'number') times.runMs.push(r.duration_ms)
  if (times !== undefined && typeof r.queue_ms === 'number') times.queueMs.push(r.queue_ms)
  if (times !== undefined && typeof r.cpu_ms === 'number') times.cpuMs.push(r.cpu_ms)
  if (r.status === 'ok' && expectStdout !== undefined && r.stdout !== expectStdout) return 'wrong_output'
  return r.status
}

/** Runs the closed loop; see the module comment. */
export async function runLoad(target: LoadTarget, shape: LoadShape): Promise<LoadReport> {
  const pool = new Pool(target.url, {
    connections: shape.connections ?? shape.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000
  })
  const latencies: number[] = []
  const runMs: number[] = []
  const queueMs: number[] = []
  let callCpuMs = 0
  let measuredCalls = 0
  const counts = new OutcomeCounter()
  let requests = 0
  const start = performance.now()
  const recordFrom = start + shape.warmupS * 1000
  const stopAt = recordFrom + shape.durationS * 1000
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(target.accept === undefined ? {} : { accept: target.accept })
  }
  let cpu: CpuShare | undefined
  let meter: ReturnType<typeof startCpuMeter> | undefined
  const meterStart = setTimeout(
    () => {
      meter = startCpuMeter(shape.serverPid)
    },
    Math.max(0, recordFrom - performance.now())
  )
  // At the end of the window the requests still in flight are aborted, so the fleet's queue
  // drains (the gateway cancels a disconnected caller's queued jobs) before the next run.
  const abort = new AbortController()
  setMaxListeners(Math.max(100, 4 * shape.concurrency), abort.signal)
  const meterStop = setTimeout(
    () => {
      cpu = meter?.stop()
      abort.abort()
    },
    Math.max(0, stopAt - performance.now())
  )

  const worker = async (_: unknown, i: number): Promise<void> => {
    const path =
      target.paths === undefined || target.paths.length === 0 ? target.path : target.paths[i % target.paths.length]
    while (performance.now() < stopAt) {
      const t0 = performance.now()
      let outcomes: string[]
      const times: ResultTimes = { runMs: [], queueMs: [], cpuMs: [] }
      try {
        const res =
          target.body === undefined
            ? await pool.request({ origin: target.url, path, method: 'GET', signal: abort.signal })
            : await pool.request({
                origin: target.url,
                path,
                method: 'POST',
                headers,
                body: target.body,
                signal: abort.signal
              })
        outcomes = target.classify(res.statusCode, await res.body.text(), times)
      } catch (err) {
        if (abort.signal.aborted) break
        const code = (err as { code?: string }).code ?? (err as Error).name
        outcomes = new Array<string>(target.callsPerRequest).fill(`transport_${code}`)
      }
      const t1 = performance.now()
      if (t1 >= recordFrom && t1 <= stopAt) {
        requests++
        latencies.push(t1 - t0)
        for (const o of outcomes) counts.add(o)
        for (const x of times.runMs) runMs.push(x)
        for (const x of times.queueMs) queueMs.push(x)
        for (const x of times.cpuMs) {
          callCpuMs += x
          measuredCalls++
        }
      }
    }
  }
  try {
    await Promise.all(Array.from({ length: shape.concurrency }, worker))
  } finally {
    clearTimeout(meterStart)
    clearTimeout(meterStop)
    cpu ??= meter?.stop()
    await pool.destroy()
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
    serverCpuMsPerCall:
      cpu?.serverUserMs === undefined || cpu.serverKernelMs === undefined || counts.total === 0
        ? undefined
        : (cpu.serverUserMs + cpu.serverKernelMs) / counts.total,
    callCpuMs,
    measuredCalls,
    usefulShare: usefulShareOf(callCpuMs, measuredCalls, cpu),
    latencyMs: summarize(latencies),
    runMs: summarize(runMs),
    queueMs: summarize(queueMs),
    counts: counts.toObject(),
    cpu
  }
}

/**
 * The useful share of a window: the calls' own CPU over all the CPU the server's process tree
 * used; undefined when no result carried a `cpu_ms` or the tree was not measured.
 */
export function usefulShareOf(callCpuMs: number, measuredCalls: number, cpu: CpuShare | undefined): number | undefined {
  const serverMs =
    cpu?.serverUserMs === undefined || cpu.serverKernelMs === undefined
      ? undefined
      : cpu.serverUserMs + cpu.serverKernelMs
  return measuredCalls === 0 || serverMs === undefined || serverMs <= 0 ? undefined : callCpuMs / serverMs
}

/**
 * A peer's useful share (a server whose results carry no `cpu_ms`): the calls' own CPU as
 * sandfleet measured it for the same calls (`ours`: its `cpu_ms` a call) times the calls the peer
 * completed, over the peer's process tree's CPU; undefined when either is missing.
 */
export function peerUsefulShare(ours: LoadReport, peer: LoadReport): number | undefined {
  if (ours.measuredCalls === 0) return undefined
  return usefulShareOf((ours.callCpuMs / ours.measuredCalls) * peer.calls, peer.calls, peer.cpu)
}
