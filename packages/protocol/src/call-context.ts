/**
 * One call's context, as gRPC's: what every layer a call passes through needs to know of it
 * besides the request itself. The gateway makes it once, where a request enters its pipeline
 * (the deadline from the call's queue budget, the tenant of its API key, the caller's signal, the
 * request's id); it is then handed down as an argument (the router, the runner clients, the
 * runner, its pool), never held in an ambient store and never changed: a layer that needs another
 * makes a new one ({@link withDeadline}). It crosses to a runner over HTTP as headers
 * ({@link contextHeaders}, read back by {@link contextOfHeaders}), the deadline as what is left
 * of it, as gRPC's `grpc-timeout` carries one.
 *
 * @example
 * ```ts
 * const context = callContext({ budgetMs: 20_000, tenant: 'team-a', signal })
 * await runner.execute({ code: 'print(1+1)' }, context)
 * ```
 */
import { RUNNER_HEADERS } from './runner.ts'

/** A call's context; see the module comment. Frozen. */
export interface CallContext {
  /**
   * The latest moment the call's jobs may start, on this process's `performance.now()` clock
   * (`Infinity`: the caller set none, the runner's own `queueTimeoutMs` alone bounds the wait). A
   * job that cannot start by then is answered `queue_timeout` and never runs.
   */
  readonly deadline: number
  /**
   * The tenant the call runs for (its API key's tenant's name; undefined: the one tenant of a
   * fleet without keys). A process reused for several jobs (`isolation: reuse`) runs jobs of one
   * tenant only.
   */
  readonly tenant: string | undefined
  /** Aborted when the caller went away: a job still waiting for a sandbox is answered without running. */
  readonly signal: AbortSignal | undefined
  /**
   * The id of the request that carries the call, as the gateway's edge named it (its log lines'
   * `reqId`; the runner's too, which take it from {@link RUNNER_HEADERS}). Not the body's
   * `request_id`: that is the caller's own label of one call, echoed in its result.
   */
  readonly requestId: string | undefined
}

/** What a {@link CallContext} is made of; every part may be left out. */
export interface CallContextInit {
  /** The deadline, as a budget from now in ms (wins over `deadline`). */
  budgetMs?: number
  /** The deadline on the `performance.now()` clock. */
  deadline?: number
  tenant?: string | undefined
  signal?: AbortSignal | undefined
  requestId?: string | undefined
}

/** Makes a frozen context; without a budget or deadline, the call has no deadline of its own. */
export function callContext(init: CallContextInit = {}, now = performance.now()): CallContext {
  return Object.freeze({
    deadline: init.budgetMs === undefined ? (init.deadline ?? Infinity) : now + init.budgetMs,
    tenant: init.tenant,
    signal: init.signal,
    requestId: init.requestId
  })
}

/** The context of a caller that says nothing: no deadline, tenant, signal or id. */
export const NO_CALL_CONTEXT: CallContext = callContext()

/** What is left of `context`'s deadline from `now`, in ms: 0 when it passed, `Infinity` without one. */
export function budgetLeft(context: CallContext, now = performance.now()): number {
  return Math.max(0, context.deadline - now)
}

/**
 * `context` with another deadline, for a new call made on the caller's behalf (a later chunk of
 * a long batch, a try again after the fleet was busy): the rest is the same.
 */
export function withDeadline(context: CallContext, deadline: number): CallContext {
  return Object.freeze({ ...context, deadline })
}

/**
 * The headers that carry `context` to a runner: what is left of its deadline, in whole ms
 * (`RUNNER_HEADERS.queueTimeoutMs`; none without a deadline), its tenant and its request id.
 */
export function contextHeaders(context: CallContext, now = performance.now()): Record<string, string> {
  const headers: Record<string, string> = {}
  if (context.deadline !== Infinity)
    headers[RUNNER_HEADERS.queueTimeoutMs] = String(Math.floor(budgetLeft(context, now)))
  if (context.tenant !== undefined) headers[RUNNER_HEADERS.tenant] = context.tenant
  if (context.requestId !== undefined) headers[RUNNER_HEADERS.requestId] = context.requestId
  return headers
}

/** A request's headers, as Node gives them. */
export type IncomingHeaders = Record<string, string | string[] | undefined>

/**
 * The context a runner's HTTP request carries ({@link contextHeaders}), with the caller's
 * `signal` and the request's id as the runner's edge names it; undefined when the queue budget
 * is not a whole number of milliseconds (a 400 naming `RUNNER_HEADERS.queueTimeoutMs`).
 */
export function contextOfHeaders(
  headers: IncomingHeaders,
  signal: AbortSignal | undefined,
  requestId: string | undefined,
  now = performance.now()
): CallContext | undefined {
  const raw = headers[RUNNER_HEADERS.queueTimeoutMs]
  let budgetMs: number | undefined
  if (raw !== undefined) {
    if (typeof raw !== 'string' || !/^\d{1,10}$/.test(raw.trim())) return undefined
    budgetMs = Number(raw.trim())
  }
  const tenant = headers[RUNNER_HEADERS.tenant]
  return callContext(
    { budgetMs, tenant: typeof tenant === 'string' && tenant !== '' ? tenant : undefined, signal, requestId },
    now
  )
}
