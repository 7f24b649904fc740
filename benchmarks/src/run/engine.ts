/**
 * The product run's load generator (undici, like load.ts), in three modes, k6's vocabulary:
 * - `step`: N calls released at once, as requests of B calls (1 for a target of single calls)
 *   spread over C keep-alive connections; a call's latency counts from the release, so the time
 *   it waited for a connection is in it (the step as a trainer sees it);
 * - `closed`: C requests in flight, each sent when the one before it is answered, for a duration;
 * - `open`: requests sent at a fixed arrival rate for a duration, whatever the answers do; a call's
 *   latency counts from its scheduled send time, so queueing shows.
 * Every answer goes through the {@link Ledger}; a closed or open run stops sending at its end and
 * waits for every request out (so nothing is lost by the harness). A sample of the counts every
 * `sampleMs` (and, in a step, at each fiftieth of its calls answered) gives the charts and the live progress.
 */
import { randomBytes } from 'node:crypto'
import { Pool } from 'undici'
import type { BenchCall } from '../workloads/calls.ts'
import { Ledger, type Accounting } from './ledger.ts'
import type { Answer, TaggedCall, Target } from './targets.ts'

/** Samples a step takes by progress, besides its timer's: one each time another fiftieth of its calls is answered. */
export const SAMPLES_BY_PROGRESS = 50

/** How a run sends. */
export interface Plan {
  mode: 'step' | 'closed' | 'open'
  url: string
  target: Target
  /** The n-th call sent (the workload, drawn in advance and cycled). */
  callAt: (n: number) => BenchCall
  /** `step`: calls released; `closed` with `callLimit`: stops sending after this many. */
  calls: number
  /** `closed`: stop sending after `calls` calls even before the duration ends. */
  callLimit?: boolean
  /** Calls per request of a batched target. */
  batchSize: number
  /** Keep-alive connections (`step`, `open`); requests in flight (`closed`). */
  connections: number
  /** `open`: calls per second (requests per second × calls per request). */
  rate: number
  /** `closed`, `open`: seconds of sending. */
  durationS: number
  /** How often the counts are sampled for the charts and the progress line. */
  sampleMs: number
  /** Longest wait for a response's headers or next body chunk. */
  requestTimeoutMs: number
  /** Called with each sample. */
  onSample?: (sample: Sample) => void
  /** Called after each call is answered (or failed), with the count of calls answered so far. */
  onAnswer?: (done: number) => void
}

/** The counts at one moment of the run. */
export interface Sample {
  /** Seconds since the run started. */
  tS: number
  /** Calls answered (first answers). */
  done: number
  right: number
  wrong: number
  failed: number
  /** Calls sent (or released) and not answered yet. */
  outstanding: number
  /** Requests on a connection now (undici's running requests); the rest wait for one. */
  onWire: number
}

/** What a run measured. */
export interface RunResult {
  accounting: Accounting
  /** Every first answer's latency, ms. */
  latencyMs: number[]
  /** First answers' latencies by their call's class (`short`, `long`, `timeout`). */
  latencyByClass: Map<string, number[]>
  /** The calls' own CPU: the sum of the `cpu_ms` their first answers carried, ms. */
  callCpuMs: number
  /** First answers that carried a `cpu_ms`. */
  measuredCalls: number
  /** From the first send (or the release) to the last answer, s. */
  elapsedS: number
  requests: number
  samples: Sample[]
}

/** Runs `plan`; resolves when every request sent has been answered or has failed. */
export async function runPlan(plan: Plan): Promise<RunResult> {
  const { target } = plan
  const perRequest = target.batched ? Math.max(1, plan.batchSize) : 1
  const ledger = new Ledger(randomBytes(4).toString('hex'))
  const pool = new Pool(plan.url, {
    connections: plan.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: plan.requestTimeoutMs,
    bodyTimeout: plan.requestTimeoutMs,
    // A patient caller: a connect waits in the listen backlog as long as a request may wait.
    connectTimeout: plan.requestTimeoutMs
  })
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(target.accept === undefined ? {} : { accept: target.accept })
  }
  const start = performance.now()
  let outstanding = 0
  let requests = 0
  let lastAnswer = start
  const samples: Sample[] = []
  const sample = (): Sample => {
    const s: Sample = {
      tS: (performance.now() - start) / 1000,
      done: ledger.answered,
      right: ledger.right,
      wrong: ledger.wrong,
      failed: ledger.failed,
      outstanding,
      onWire: pool.stats.running
    }
    samples.push(s)
    plan.onSample?.(s)
    return s
  }
  sample()
  const sampler = setInterval(sample, plan.sampleMs)
  // A step also samples by progress, so its charts hold points however fast it runs (one that ends within a timer's
  // period would have only its first and last).
  const every = plan.mode === 'step' ? Math.max(1, Math.ceil(plan.calls / SAMPLES_BY_PROGRESS)) : Infinity
  let nextAt = every
  const answered = (): void => {
    if (ledger.answered >= nextAt) {
      nextAt = (Math.floor(ledger.answered / every) + 1) * every
      sample()
    }
    plan.onAnswer?.(ledger.answered)
  }

  let sent = 0
  /** The next request's calls, registered in the ledger. */
  const nextGroup = (count: number): Array<{ index: number; tagged: TaggedCall }> =>
    Array.from({ length: count }, () => {
      const call = plan.callAt(sent++)
      const { index, nonce } = ledger.add(call)
      return { index, tagged: { call, nonce } }
    })

  /**
   * Sends one request; `from` is when its calls count from; `counted`: its calls are already in `outstanding` (a step's
   * are from the release).
   */
  const send = async (
    group: Array<{ index: number; tagged: TaggedCall }>,
    from: number,
    counted = false
  ): Promise<void> => {
    if (!counted) outstanding += group.length
    requests++
    const seen = new Uint8Array(group.length)
    const take = (a: Answer): void => {
      const at = group[a.position]
      if (at !== undefined && !seen[a.position] && (a.nonce === undefined || a.nonce === at.tagged.nonce)) {
        seen[a.position] = 1
        outstanding--
      }
      ledger.answer(at?.index, a, performance.now() - from)
      lastAnswer = performance.now()
      answered()
    }
    const failRest = (status: string): void => {
      group.forEach((g, i) => {
        if (!seen[i]) {
          seen[i] = 1
          outstanding--
          ledger.fail(g.index, status, performance.now() - from)
        }
      })
      lastAnswer = performance.now()
      answered()
    }
    try {
      const res = await pool.request({
        path: target.path,
        method: 'POST',
        headers,
        body: target.body(group.map((g) => g.tagged))
      })
      if (res.statusCode === 200 && target.line !== undefined) {
        res.body.setEncoding('utf8')
        let buf = ''
        for await (const chunk of res.body) {
          buf += chunk as string
          let nl
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl)
            buf = buf.slice(nl + 1)
            if (line === '') continue
            const answer = target.line(line)
            if (answer === undefined) {
              failRest('bad_response')
              return
            }
            take(answer)
          }
        }
      } else {
        const reading = target.read(res.statusCode, await res.body.text())
        if ('failed' in reading) {
          failRest(reading.failed)
          return
        }
        for (const a of reading.answers) take(a)
      }
      // Calls the response left out are lost: not answered, so the ledger counts them so.
      group.forEach((_, i) => {
        if (!seen[i]) {
          seen[i] = 1
          outstanding--
        }
      })
    } catch (err) {
      failRest(`transport_${(err as { code?: string }).code ?? (err as Error).name}`)
    }
  }

  const inFlight: Array<Promise<void>> = []
  try {
    if (plan.mode === 'step') {
      // Every call is released (registered, counted in flight) at t0; C senders, one a
      // connection, take the next request as each answer comes, so the rest wait their turn in
      // the harness, as a trainer's queue would, and their wait is in their latency.
      const t0 = performance.now()
      const groups: Array<Array<{ index: number; tagged: TaggedCall }>> = []
      for (let left = plan.calls; left > 0; left -= perRequest) groups.push(nextGroup(Math.min(perRequest, left)))
      outstanding += plan.calls
      let next = 0
      const sender = async (): Promise<void> => {
        while (next < groups.length) await send(groups[next++], t0, true)
      }
      for (let i = 0; i < Math.min(plan.connections, groups.length); i++) inFlight.push(sender())
    } else if (plan.mode === 'closed') {
      const stopAt = start + plan.durationS * 1000
      const worker = async (): Promise<void> => {
        while (performance.now() < stopAt && (plan.callLimit !== true || sent < plan.calls))
          await send(
            nextGroup(Math.min(perRequest, plan.callLimit === true ? plan.calls - sent : perRequest)),
            performance.now()
          )
      }
      for (let i = 0; i < plan.connections; i++) inFlight.push(worker())
    } else {
      const perS = plan.rate / perRequest
      const total = Math.max(1, Math.round(perS * plan.durationS))
      let k = 0
      await new Promise<void>((resolve) => {
        const tick = (): void => {
          const now = performance.now()
          while (k < total && start + (k / perS) * 1000 <= now)
            inFlight.push(send(nextGroup(perRequest), start + (k++ / perS) * 1000))
          if (k >= total) {
            resolve()
            return
          }
          setTimeout(tick, Math.max(0, Math.min(5, start + (k / perS) * 1000 - performance.now())))
        }
        tick()
      })
    }
    await Promise.all(inFlight)
  } finally {
    clearInterval(sampler)
    sample()
    await pool.destroy()
  }
  return {
    accounting: ledger.accounting(),
    latencyMs: ledger.latencyMs,
    latencyByClass: ledger.latencyByClass,
    callCpuMs: ledger.callCpuMs,
    measuredCalls: ledger.measuredCalls,
    elapsedS: (lastAnswer - start) / 1000,
    requests,
    samples
  }
}
