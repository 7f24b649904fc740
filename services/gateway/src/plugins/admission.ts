/**
 * Admission: at most `maxInFlight` calls (a batch weighs its item count) are held at once;
 * past that a request is answered 429 with `Retry-After` before anything is queued. A route opts
 * in with `config: { admission: 'one' | 'batch' }`; the slot is freed when its response closes
 * (sent, or the caller went away).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { GatewayError } from '../errors.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How a route's calls are weighed by admission: one call, or one per batch item. */
    admission?: 'one' | 'batch'
  }
}

/** The in-flight counter, readable by metrics and readiness. */
export class Admission {
  readonly limit: number
  #inFlight = 0

  constructor (limit: number) {
    this.limit = limit
  }

  /** Calls held now. */
  get inFlight (): number {
    return this.#inFlight
  }

  /** Takes `weight` slots, or returns false when that would pass the limit. */
  tryAcquire (weight: number): boolean {
    if (this.#inFlight + weight > this.limit && this.#inFlight > 0) return false
    this.#inFlight += weight
    return true
  }

  /** Gives back `weight` slots. */
  release (weight: number): void {
    this.#inFlight -= weight
  }
}

/** Adds the admission hook to `app`. */
export function installAdmission (app: FastifyInstance, admission: Admission, retryAfterS: number): void {
  app.addHook('preHandler', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const kind = request.routeOptions.config.admission
    if (kind === undefined) { done(); return }
    const weight = kind === 'batch' ? ((request.body as { requests?: unknown[] }).requests?.length ?? 1) : 1
    if (!admission.tryAcquire(weight)) {
      void reply.header('retry-after', String(retryAfterS))
      done(new GatewayError('SF_ERR_GATEWAY_OVERLOADED', `the gateway holds ${admission.inFlight} calls (limit ${admission.limit}); retry later`))
      return
    }
    reply.raw.once('close', () => admission.release(weight))
    done()
  })
}

/**
 * Admission for paths that are not one route each (the compatible APIs): runs `work` holding
 * `weight` slots, or answers `refused()` at once, running nothing, when that would pass the limit.
 */
export async function admitted<T> (admission: Admission, weight: number, work: () => Promise<T>, refused: () => T): Promise<T> {
  if (!admission.tryAcquire(weight)) return refused()
  try {
    return await work()
  } finally {
    admission.release(weight)
  }
}
