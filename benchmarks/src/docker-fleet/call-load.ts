/**
 * Load for fleet suites: numbered calls (`print(i * i + salt)`, each answer known) sent over
 * `concurrency` connections, spread over the gateways in turn, each answer checked and timed.
 */

/** One call as it was answered. */
export interface CallRecord {
  index: number
  /** `performance.now()` when it was sent, and how long its answer took, ms. */
  sentAt: number
  latencyMs: number
  httpStatus: number
  status: string
  /** Its answer was the call's own, right output. */
  correct: boolean
  runner: string
  error?: unknown
  /** Its `request_id` (`call-INDEX`) and its code: what a retry of it sends again. */
  requestId: string
  code: string
  /** The answer's `error.type` (a stable code for the fleet's faults), its `maybe_ran` and `replayed`. */
  type?: string
  maybeRan?: boolean
  replayed?: boolean
}

/** Options of {@link callLoad}. */
export interface CallLoadOptions {
  gateways: readonly string[]
  concurrency: number
  /** Calls to make; without it, calls go on until `stop()` says true. */
  calls?: number
  stop?: () => boolean
  /** Python run before the printed answer (a sleep workload: `import time; time.sleep(0.05)`). */
  prelude?: string
  /** Sees every answer as it comes. */
  onAnswer?: (record: CallRecord, answered: number) => void
  /** Each call's `timeout_ms` (default: the fleet's). */
  timeoutMs?: number
}

/** Runs the load; resolves with one record per call, in call order. */
export async function callLoad(options: CallLoadOptions): Promise<CallRecord[]> {
  const records: CallRecord[] = []
  const salt = Math.floor(Math.random() * 1_000_000)
  let next = 0
  let answered = 0
  const more = (): boolean => (options.calls !== undefined ? next < options.calls : options.stop?.() !== true)
  const worker = async (): Promise<void> => {
    while (more()) {
      const index = next++
      const gateway = options.gateways[index % options.gateways.length]
      const code = `${options.prelude === undefined ? '' : `${options.prelude}\n`}print(${index} * ${index} + ${salt})`
      const sentAt = performance.now()
      let record: CallRecord
      try {
        const res = await fetch(`${gateway}/v1/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            code,
            request_id: `call-${index}`,
            ...(options.timeoutMs === undefined ? {} : { timeout_ms: options.timeoutMs })
          })
        })
        const body = (await res.json()) as {
          status: string
          stdout: string
          request_id?: string
          runner?: string
          error?: { type?: string } | null
          maybe_ran?: boolean
          replayed?: boolean
        }
        record = {
          index,
          sentAt,
          latencyMs: performance.now() - sentAt,
          httpStatus: res.status,
          status: body.status,
          correct:
            res.status === 200 &&
            body.status === 'ok' &&
            body.stdout === `${index * index + salt}\n` &&
            body.request_id === `call-${index}`,
          runner: body.runner ?? '',
          error: body.error,
          requestId: `call-${index}`,
          code,
          ...(typeof body.error?.type === 'string' ? { type: body.error.type } : {}),
          ...(body.maybe_ran === undefined ? {} : { maybeRan: body.maybe_ran }),
          ...(body.replayed === undefined ? {} : { replayed: body.replayed })
        }
      } catch (err) {
        record = {
          index,
          sentAt,
          latencyMs: performance.now() - sentAt,
          httpStatus: 0,
          status: 'no_answer',
          correct: false,
          runner: '',
          error: String(err),
          requestId: `call-${index}`,
          code
        }
      }
      records[index] = record
      options.onAnswer?.(record, ++answered)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  return records
}

/** The q-quantile (0..1) of `values`, ms. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/** A sum of `sandfleet_gateway_retries_total` over statuses, from a gateway's /metrics. */
export async function gatewayRetries(gateway: string): Promise<number> {
  const text = await (await fetch(`${gateway}/metrics`)).text()
  let sum = 0
  for (const m of text.matchAll(/^sandfleet_gateway_retries_total(?:\{[^}]*\})? (\d+(?:\.\d+)?)$/gm))
    sum += Number(m[1])
  return sum
}
