/**
 * What a call route declares, in its `config.calls`, for the pipeline (pipeline.ts): how its
 * body maps to calls (what the limits stage checks) and what it weighs (what the quota and
 * admission stages take). Every API's routes declare it the same way; nothing outside an API's
 * folder knows its routes.
 *
 * @example
 * ```ts
 * app.post('/v1/execute', { config: { calls: { of: (body: ExecRequest) => [body] } } }, handler)
 * ```
 */
import type { Call, OverLimit } from './call-limits.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route runs code: how its body maps to calls and what they weigh (route-calls.ts). */
    calls?: RouteCalls
  }
}

/**
 * The weight of a request of `declared`'s route whose body is `body` and whose calls are `calls` (see {@link
 * RouteCalls.weight}).
 */
export function weightOf(declared: RouteCalls, body: unknown, calls: readonly Call[]): number {
  return declared.weight?.(body, calls) ?? Math.max(1, calls.length)
}

/** An answer in an API's own shape, sent instead of running anything. */
export interface Refusal {
  statusCode: number
  payload: unknown
}

/** A call route's declaration. `Body` is its body after the parse stage (shape-checked). */
// The pipeline holds every route's declaration, whatever its body.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface RouteCalls<Body = any> {
  /** The calls `body` asks for, as the `ExecRequest`s they become, for the limits stage. */
  of: (body: Body) => readonly Call[]
  /**
   * The calls the request makes, for the quota and admission stages (default: as many as `of`
   * gives, at least one); 0 takes nothing (an MCP message that calls no tool).
   */
  weight?: (body: Body, calls: readonly Call[]) => number
  /**
   * Of those, how many it holds at once, for admission (default: all of them); a code-judge long
   * batch runs its items a few at a time, waiting for capacity between them.
   */
  held?: (weight: number) => number
  /** The calls are a batch, held to `maxBatchItems` too. */
  batch?: boolean
  /** Where call `index` is in the body (its field's path is this, then `/field`); default: the body itself. */
  at?: (index: number) => string
  /**
   * What the route's body schema cannot say about `body`, checked before the limits (the last step of the parse stage):
   * the field at fault, as its path in the body, and why (a judge with both `tests` and `input_output`). Answered as
   * the gateway's 400 ErrorBody naming the field.
   */
  problem?: (body: Body) => { field: string; message: string } | undefined
  /** Answers a call over a limit in the API's shape; default: the gateway's 400 ErrorBody naming the field. */
  refuse?: (over: OverLimit, body: Body) => Refusal
}
