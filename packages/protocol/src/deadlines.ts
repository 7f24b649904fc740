/**
 * How long each part of the fleet waits, in one place: the default `timeout_ms` is resolved by
 * `timeoutMsOf` (exec.ts), and every grace added to it on the way back is in {@link GRACES}. Each
 * layer's wait covers the one inside it, so an answer always comes from the innermost layer that
 * can still give one:
 *
 *   sandbox: `timeout_ms` (the soft stop), + `GRACES.softStopMs` (the executor, isolate or host kills the code)
 *   runner:  + `GRACES.sandboxMs` (the runner kills a sandbox that has not answered)
 *   gateway: queue budget left + `timeout_ms` + `GRACES.callMs` (the runner is counted unreachable)
 *   client:  `timeout_ms` + `GRACES.clientSlackMs` (all attempts of one call)
 */
/** The graces added to a call's `timeout_ms` by each layer, ms (the defaults of the settings named). */
export const GRACES = Object.freeze({
  /** Beyond `timeout_ms` and its driver's own stop time, how long a sandbox may take to answer before the runner's pool answers `timeout` and kills it (the runner's `graceMs`). */
  sandboxMs: 2000,
  /**
   * The soft stop: at `timeout_ms` a job gets SIGTERM (a Python handler of its own may run, print
   * and exit; pyodide raises it as an interrupt) and this long to end before the hard kill. What
   * it wrote comes back, with status `timeout`.
   */
  softStopMs: 500,
  /** Pyodide: past its hard stop, how long the host may take to read what a stopped job wrote and answer (part of its driver's `stopMs`). */
  pyodideHostSlackMs: 1000,
  /** Beyond the queue budget left plus `timeout_ms`, how long a gateway waits for a runner's answer (the gateway's `callGraceMs`). */
  callMs: 5000,
  /** Beyond `timeout_ms`, how long the client lets a call take, queueing and retries included (the client's `deadlineSlackMs`). */
  clientSlackMs: 30_000
})
