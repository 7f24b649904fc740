/**
 * The choice of an engine for a new generation, shared by {@link KvScheduler} and the simulation
 * benchmark: least requests in flight (the default), by free KV capacity (rStar2-Agent report
 * §3.2), or round robin.
 */

/** How new generations are spread over engines. */
export type SchedulePolicy = 'kv' | 'round_robin' | 'least_requests'

/** The policies, for flag validation. */
export const SCHEDULE_POLICIES: readonly SchedulePolicy[] = Object.freeze(['least_requests', 'kv', 'round_robin'])

/**
 * The default policy: least requests, the one policy of benchmarks/src/rollout-scheduler-sim.ts
 * that no other beats at every load it reports (`kv` with a small reservation and reported
 * usage leads when the engines' KV is overcommitted, static assignment at light load:
 * benchmarks/RESULTS.md).
 */
export const DEFAULT_SCHEDULE_POLICY: SchedulePolicy = 'least_requests'

/** What a picker knows of one engine. */
export interface EngineSlot {
  /** KV cache capacity, tokens. */
  capacityTokens: number
  /** Tokens reserved by the generations in flight there (each: context + its max new tokens). */
  reservedTokens: number
  /** Generations in flight there. */
  inFlight: number
  /** KV tokens the engine reports in use (its metrics), when known: free is capacity − max(reserved, used). */
  usedTokens?: number
  /** False while the engine is cooling down after a transient failure: picked only when every engine is. */
  available?: boolean
}

/** Free KV tokens of a slot: capacity less the larger of what is reserved and what is reported used. */
export function freeTokens(s: EngineSlot): number {
  return s.capacityTokens - Math.max(s.reservedTokens, s.usedTokens ?? 0)
}

/** Picks engines under one policy; round robin keeps its position. */
export class EnginePicker {
  private next = 0

  /** A picker for `policy`. */
  constructor(readonly policy: SchedulePolicy) {}

  /**
   * The engine for a generation that may need `needTokens` of KV cache, or undefined to wait
   * (only the `kv` policy waits: when no engine has that much free). A generation larger than
   * every engine goes to the idle engine with the largest capacity, so nothing waits forever.
   * Under `kv`, `preferred` (the engine that served the same trajectory's previous turn, whose
   * prefix cache holds its context) is taken whenever it has room.
   */
  pick(all: readonly EngineSlot[], needTokens: number, preferred?: number): number | undefined {
    if (all.length === 0) return undefined
    // engines cooling down after a failure are left out while another one is up
    const up = all.some((s) => s.available !== false)
    const slots = up
      ? all.map((s) => (s.available === false ? { ...s, capacityTokens: -1, inFlight: Number.POSITIVE_INFINITY } : s))
      : all
    if (up && this.policy === 'round_robin') {
      for (let k = 0; k < all.length; k++) {
        const i = (this.next + k) % all.length
        if (all[i].available !== false) {
          this.next = i + 1
          return i
        }
      }
    }
    if (
      this.policy === 'kv' &&
      preferred !== undefined &&
      slots[preferred] !== undefined &&
      freeTokens(slots[preferred]) >= needTokens
    )
      return preferred
    if (this.policy === 'round_robin') {
      const i = this.next % slots.length
      this.next = i + 1
      return i
    }
    if (this.policy === 'least_requests') return argBest(slots, (a, b) => a.inFlight - b.inFlight)
    const fits = slots.map((s, i) => ({ s, i })).filter(({ s }) => freeTokens(s) >= needTokens)
    if (fits.length > 0) {
      fits.sort((a, b) => freeTokens(b.s) - freeTokens(a.s) || a.s.inFlight - b.s.inFlight || a.i - b.i)
      return fits[0].i
    }
    if (slots.every((s) => s.capacityTokens < needTokens)) {
      const idle = slots.map((s, i) => ({ s, i })).filter(({ s }) => s.inFlight === 0)
      if (idle.length > 0) return idle.sort((a, b) => b.s.capacityTokens - a.s.capacityTokens || a.i - b.i)[0].i
    }
    return undefined
  }
}

function argBest(slots: readonly EngineSlot[], cmp: (a: EngineSlot, b: EngineSlot) => number): number {
  let best = 0
  for (let i = 1; i < slots.length; i++) if (cmp(slots[i], slots[best]) < 0) best = i
  return best
}
