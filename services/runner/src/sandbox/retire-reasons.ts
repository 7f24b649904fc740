/**
 * Why a sandbox cannot take another job: one short word of a closed set, given by the sandbox with
 * its outcome (`RunOutcome.retire_reason`, the executor's `retire_reason`) and counted as the
 * `reason` label of `sandfleet_runner_sandbox_replacements_total`. A job's end (`timeout`,
 * `memory`, `killed`) is never a reason by itself: only what the sandbox could not undo after it.
 */

/** Every reason a sandbox may give; anything else is counted as `other`. */
export const RETIRE_REASONS = [
  // The executor (process, docker, unsafe): a process of the job survived SIGKILL; what it left
  // could not be removed; a zygote died, was changed or did not report the job's end; the
  // controller's own limits or scheduling (or a spare's) were changed.
  'unswept',
  'cleanup',
  'zygote',
  'tampered',
  // Any backend: out of memory beyond the job (the container or the isolate itself); the
  // sandbox's own process or interpreter failed; its executor exited while the job ran.
  'oom',
  'broken',
  'exited',
  // The isolates (pyodide): the job used the JavaScript FFI, changed the file system outside its
  // places, grew the wasm memory past what may be kept (it cannot shrink), or was stopped by
  // terminating the isolate (the interpreter cut mid-call).
  'ffi',
  'files',
  'grown',
  'hard_stop',
  // The driver's own job limit (docker's `jobsPerContainer`).
  'max_jobs',
  'other'
] as const

/** One of {@link RETIRE_REASONS}. */
export type RetireReason = (typeof RETIRE_REASONS)[number]

const KNOWN: ReadonlySet<string> = new Set(RETIRE_REASONS)

/**
 * `reason` when it is one of {@link RETIRE_REASONS}, else `other` (a metric's label never takes what a sandbox sends
 * unchecked).
 */
export function retireReasonOf(reason: unknown): RetireReason {
  return typeof reason === 'string' && KNOWN.has(reason) ? (reason as RetireReason) : 'other'
}
