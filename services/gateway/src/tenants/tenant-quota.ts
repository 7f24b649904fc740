/**
 * One tenant's quotas: the calls it may hold at once (in flight) and the calls it may start a
 * second (a token bucket). A call takes `weight` of both (a batch weighs its items); the in-flight
 * part is given back when its response closes, the rate part refills with time.
 */

/** Why a call was refused: the label of `sandfleet_gateway_tenant_rejected_total`. */
export type QuotaReason = 'in_flight' | 'rate'

/** A refusal: why, and in how many whole seconds a retry may pass. */
export interface QuotaRefusal {
  reason: QuotaReason
  retryAfterS: number
}

/** A tenant's in-flight count and token bucket. */
export class TenantQuota {
  /** Calls held at most; 0: no bound. */
  readonly maxInFlight: number
  /** Calls a second; 0: no bound. */
  readonly ratePerSecond: number
  /** The bucket's size: one second of calls, at least one call. */
  readonly burst: number
  readonly #now: () => number
  #inFlight = 0
  #tokens: number
  #at: number

  /** 0 for no bound; `now`: the clock in milliseconds (tests pass their own). */
  constructor(maxInFlight: number, ratePerSecond: number, now: () => number = () => performance.now()) {
    this.#now = now
    this.maxInFlight = maxInFlight
    this.ratePerSecond = ratePerSecond
    this.burst = Math.max(1, ratePerSecond)
    this.#tokens = this.burst
    this.#at = now()
  }

  /** Calls held now. */
  get inFlight(): number {
    return this.#inFlight
  }

  /** Tokens in the bucket now (negative: calls of a batch larger than the bucket still being paid for). */
  get tokens(): number {
    this.#refill()
    return this.#tokens
  }

  /**
   * Takes `weight` calls, or answers why not, taking nothing. A batch larger than a bound still
   * passes when the tenant holds nothing (in flight) or its bucket is full (rate), so no request
   * waits forever; the bucket then goes below zero, and the tenant waits until it has refilled.
   * `inFlightRetryAfterS` is the Retry-After of an in-flight refusal (when calls end is unknown).
   */
  tryTake(weight: number, inFlightRetryAfterS: number): QuotaRefusal | undefined {
    if (this.maxInFlight > 0 && this.#inFlight + weight > this.maxInFlight && this.#inFlight > 0) {
      return { reason: 'in_flight', retryAfterS: inFlightRetryAfterS }
    }
    if (this.ratePerSecond > 0) {
      this.#refill()
      const needed = Math.min(weight, this.burst)
      if (this.#tokens < needed)
        return { reason: 'rate', retryAfterS: Math.max(1, Math.ceil((needed - this.#tokens) / this.ratePerSecond)) }
      this.#tokens -= weight
    }
    this.#inFlight += weight
    return undefined
  }

  /** Gives back the in-flight part of what `tryTake(weight)` took. */
  release(weight: number): void {
    this.#inFlight -= weight
  }

  #refill(): void {
    const now = this.#now()
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.ratePerSecond)
    this.#at = now
  }
}
