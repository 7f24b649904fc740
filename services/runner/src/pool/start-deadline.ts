/**
 * A job's one deadline for waiting (`Job.startBy`): the latest moment it may start, decided once
 * where the call comes in (the runner; the pool for a job handed to it directly).
 */

/**
 * The `startBy` of a job whose caller gives it `askedMs` (undefined or negative: no budget of
 * its own) under a limit of `capMs`, counted from `now` (the `performance.now()` clock).
 */
export function startDeadline(askedMs: number | undefined, capMs: number, now = performance.now()): number {
  return now + (askedMs !== undefined && askedMs >= 0 ? Math.min(askedMs, capMs) : capMs)
}
