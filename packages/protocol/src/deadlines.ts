/**
 * How long each part of the fleet waits, in one place: the default `timeout_ms` is resolved by
 * `timeoutMsOf` (exec.ts), the default wait for a sandbox is {@link QUEUE_TIMEOUT_MS}, and every
 * grace added on the way back is in {@link GRACES}. Each layer's wait covers the one inside it,
 * so an answer always comes from the innermost layer that can still give one:
 *
 *   sandbox: `timeout_ms` (the soft stop), + its driver's `stopMs` (the executor, isolate or host kills the code)
 *   runner:  + `GRACES.sandboxMs` (the runner kills a sandbox that has not answered)
 *   gateway: queue budget left + `timeout_ms` + `GRACES.callMs` (the runner is counted unreachable)
 *   client:  `timeout_ms` + `GRACES.clientSlackMs` (all attempts of one call, their queueing included)
 *
 * Where the settings could break that order they are checked: a gateway refuses a runner whose
 * load report (`grace_ms`, `stop_ms`) says it may answer later past `timeout_ms` than the
 * gateway's `callGraceMs` waits (at start-up it refuses to start). The defaults keep the order
 * too, which the protocol's tests check (the client's slack covers a queue budget and the
 * gateway's grace, which covers the runner's grace and the longest stop).
 */

/**
 * How long a call may wait for a sandbox by default, ms: the default of the gateway's
 * `queueTimeoutMs` (over all the attempts of a call) and of the runner's (its cap on each job's
 * wait), one number so that under the defaults the runner's cap never cuts a gateway's budget.
 */
export const QUEUE_TIMEOUT_MS = 20_000

/** The graces added to a call's `timeout_ms` by each layer, ms (the defaults of the settings named). */
export const GRACES = Object.freeze({
  /**
   * Beyond `timeout_ms` and its driver's own stop time, how long a sandbox may take to answer before the runner's pool
   * answers `infra_error` (stalled: the fleet's fault, never the code's `timeout`) and kills it (the runner's
   * `graceMs`).
   */
  sandboxMs: 2000,
  /**
   * The soft stop: at `timeout_ms` a job gets SIGTERM (a Python handler of its own may run, print
   * and exit; pyodide raises it as an interrupt) and this long to end before the hard kill. What
   * it wrote comes back, with status `timeout`.
   */
  softStopMs: 500,
  /**
   * Pyodide: past its hard stop, how long the host may take to read what a stopped job wrote and answer (part of its
   * driver's `stopMs`).
   */
  pyodideHostSlackMs: 1000,
  /**
   * Beyond the queue budget left plus `timeout_ms`, how long a gateway waits for a runner's answer (the gateway's
   * `callGraceMs`).
   */
  callMs: 5000,
  /**
   * Beyond `timeout_ms`, how long the client lets a call take, queueing and retries included (the client's
   * `deadlineSlackMs`).
   */
  clientSlackMs: 30_000
})
