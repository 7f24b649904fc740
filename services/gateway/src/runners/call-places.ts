/**
 * Where this gateway sent the calls it took, by request id: a retry of a call (the same
 * `request_id`) goes back to the runner that had it while that runner is up, so the runner
 * answers it from its first run (its memory of its calls) instead of running it again. A caller
 * that retries through another gateway names that runner itself (`GATEWAY_HEADERS.runner`, the
 * `runner` of the answer it got), which wins. Bounded: the last {@link PLACES_KEPT} calls, for
 * {@link PLACES_KEPT_MS}, per tenant. Every call gets an id: the caller's, or one this gateway
 * gives it ({@link identified}), returned in its result.
 */
import { randomUUID } from 'node:crypto'
import type { CallContext, ExecRequest } from '@sandfleet/protocol'

/** Calls whose runner a gateway remembers at most. */
export const PLACES_KEPT = 65_536
/** How long a gateway remembers where a call went, ms (the runners' default `replayWindowS`). */
export const PLACES_KEPT_MS = 300_000

/** `request` with a `request_id`: its own, or a new one. */
export function identified(request: ExecRequest): ExecRequest {
  return request.request_id === undefined ? { ...request, request_id: randomUUID() } : request
}

/** Where the calls went; see the module comment. */
export class CallPlaces {
  /** Runner id by tenant and request id, oldest first, with when it was sent there. */
  readonly #places = new Map<string, { runner: string; at: number }>()

  constructor(
    readonly kept = PLACES_KEPT,
    readonly keptMs = PLACES_KEPT_MS
  ) {}

  static #key(request: ExecRequest, context: CallContext): string | undefined {
    return request.request_id === undefined ? undefined : `${context.tenant ?? ''}\0${request.request_id}`
  }

  /** The runner that had `request` (its id, in `context`'s tenant), if this gateway sent it one lately. */
  where(request: ExecRequest, context: CallContext, now = performance.now()): string | undefined {
    const key = CallPlaces.#key(request, context)
    if (key === undefined) return undefined
    const place = this.#places.get(key)
    if (place === undefined) return undefined
    if (now - place.at > this.keptMs) {
      this.#places.delete(key)
      return undefined
    }
    return place.runner
  }

  /** `request` was sent to `runner`. */
  sent(request: ExecRequest, context: CallContext, runner: string, now = performance.now()): void {
    const key = CallPlaces.#key(request, context)
    if (key === undefined) return
    this.#places.delete(key)
    this.#places.set(key, { runner, at: now })
    if (this.#places.size > this.kept) this.#places.delete(this.#places.keys().next().value as string)
  }
}
