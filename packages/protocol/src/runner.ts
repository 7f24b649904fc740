/** What a runner reports to gateways: its capacity and load, for routing. */
import { Type, type Static } from '@sinclair/typebox'
import { LANGUAGES } from './exec.ts'

/** Lifecycle of a runner. */
export const RUNNER_STATES = ['starting', 'ready', 'draining', 'closed'] as const
/** A runner's lifecycle state. */
export type RunnerState = (typeof RUNNER_STATES)[number]

/** One language's pool in a {@link RunnerLoad}. */
const PoolLoadSchema = Type.Object({
  capacity: Type.Integer({ description: 'Sandboxes of this language that can run at once' }),
  queued: Type.Integer({ description: 'Jobs of this language waiting for a sandbox' }),
  backend: Type.Optional(
    Type.String({ description: "Driver of this language's pool (javascript's is javascript, whatever Python's)" })
  )
})

/** Schema of {@link RunnerLoad}. */
export const RunnerLoadSchema = Type.Object(
  {
    runner: Type.String({ description: "The runner's id, unique in the fleet" }),
    state: Type.Union(RUNNER_STATES.map((s) => Type.Literal(s))),
    backend: Type.String({ description: 'Driver of its Python pool: process | docker | pyodide | unsafe' }),
    languages: Type.Array(Type.Union(LANGUAGES.map((l) => Type.Literal(l)))),
    capacity: Type.Integer({ description: 'Sandboxes that can run at once' }),
    in_flight: Type.Integer({ description: 'Jobs running now' }),
    queued: Type.Integer({ description: 'Jobs waiting for a sandbox' }),
    queue_limit: Type.Integer({ description: 'Most jobs it will queue before answering overloaded' }),
    warm: Type.Integer({ description: 'Sandboxes idle and ready' }),
    busy: Type.Integer({ description: 'Sandboxes running a job' }),
    sessions: Type.Integer({ description: 'Sessions held' }),
    grace_ms: Type.Optional(
      Type.Integer({
        description:
          "Its graceMs: past timeout_ms and its backends' stop, how long a sandbox may take to answer before the runner answers infra_error (stalled)"
      })
    ),
    stop_ms: Type.Optional(
      Type.Integer({
        description:
          'The longest its backends take past timeout_ms to stop a job (their stopMs); a job is answered by timeout_ms + stop_ms + grace_ms'
      })
    ),
    pools: Type.Optional(
      Type.Object(
        {
          python: Type.Optional(PoolLoadSchema),
          javascript: Type.Optional(PoolLoadSchema)
        },
        { description: 'Capacity and queue per language (the totals above add them up)' }
      )
    )
  },
  { $id: 'RunnerLoad' }
)

/** A runner's load report (`GET /v1/runner/load`). */
export type RunnerLoad = Static<typeof RunnerLoadSchema>

/** Paths of the runner's internal API, which gateways call. */
export const RUNNER_PATHS = Object.freeze({
  execute: '/v1/execute',
  batch: '/v1/execute/batch',
  judge: '/v1/judge',
  judgeBatch: '/v1/judge/batch',
  load: '/v1/runner/load',
  info: '/v1/info'
})

/** Headers of the runner's internal API, set by gateways. */
export const RUNNER_HEADERS = Object.freeze({
  /**
   * How long the call's jobs may still wait for a sandbox, in whole milliseconds: what is left of
   * the gateway's queue budget for this attempt. The runner's own `queueTimeoutMs` caps it; a
   * job that cannot start in time is answered `queue_timeout` and never runs.
   */
  queueTimeoutMs: 'x-sandfleet-queue-timeout-ms',
  /**
   * The id of the request at the gateway's edge (its log lines' `reqId`): the runner's request
   * takes it as its own id, so one id names the call on both services' lines.
   */
  requestId: 'x-sandfleet-request-id',
  /** The caller's key (a digest, never the key itself), to the session API. */
  sessionKey: 'x-sandfleet-key',
  /**
   * The tenant the call's jobs run for (the name of its API key's tenant; absent without keys):
   * the runner never gives two tenants' jobs the same reused process (`isolation: reuse`).
   */
  tenant: 'x-sandfleet-tenant'
})
