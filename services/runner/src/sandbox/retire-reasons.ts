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
  // The pool: a job kept the sandbox from answering by its hard deadline, its processes filling one of the sandbox's
  // limits (a fork bomb starving the executor that must stop it); the job is answered `timeout`.
  'exhausted',
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

/** A job's end that is the code's, not the sandbox's: a sandbox that can stop the job and put itself back serves on. */
export type JobEnd = 'timeout' | 'memory' | 'killed'

/** What each reason means, as the isolation report says it ("it is replaced when …"). */
export const RETIRE_REASON_TEXT: Readonly<Record<RetireReason, string>> = Object.freeze({
  unswept: 'a process of the job survives SIGKILL',
  cleanup: 'what the job left cannot be removed',
  zygote: 'a warm zygote dies or is changed',
  tampered: "a job changed the sandbox's own limits or scheduling",
  oom: 'the whole sandbox (not only its job) runs out of memory',
  broken: "the sandbox's own process or interpreter fails",
  exited: 'its executor exits while a job runs',
  ffi: 'a job used the JavaScript FFI',
  files: 'a job changed files outside its writable places',
  grown: 'a job grew the wasm memory past what may be kept (it cannot shrink)',
  hard_stop: 'a job ignored the soft stop and the interpreter was cut mid-call',
  max_jobs: 'it ran its job limit',
  exhausted: "a job's processes fill its limit and keep it from answering by the job's hard deadline",
  other: 'it fails in another way'
})

/**
 * How a driver's sandboxes live through their jobs, declared by the driver: the job ends after which a sandbox takes
 * the next job (job-ends.test.ts holds each backend to it), and the reasons its sandboxes retire with. Its isolation
 * report's line is made from it ({@link lifeLine}), never written by hand.
 */
export interface SandboxLife {
  /** What a sandbox is called in the report: `sandbox`, `container`, `isolate`, `executor`. */
  noun: string
  keeps: readonly JobEnd[]
  retires: readonly RetireReason[]
  /** This driver's own words for a reason (JavaScript's `oom`: the job's heap went over its limit). */
  says?: Partial<Record<RetireReason, string>>
}

/** `a, b or c`. */
function either(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}

/** The first half of {@link lifeLine}: what a sandbox serves on after. */
export function keptPhrase(life: Pick<SandboxLife, 'noun' | 'keeps'>): string {
  return life.keeps.length === 0
    ? `no job's end is survived: every ${life.noun} serves one job`
    : `after a job that ended ${either(life.keeps)} the ${life.noun} takes the next job`
}

/**
 * The isolation report's line on a sandbox's life: what it serves on after, and every reason it is replaced for
 * (its own, then the pool's: a job's hard deadline, a death, the runner's `maxJobsPerSandbox`).
 */
export function lifeLine(life: SandboxLife): string {
  const own = life.retires.filter((r) => r !== 'other').map((r) => life.says?.[r] ?? RETIRE_REASON_TEXT[r])
  const pool = [
    "it does not answer by a job's hard deadline",
    'it dies on its own',
    "it reaches the runner's maxJobsPerSandbox"
  ]
  return `jobs: ${keptPhrase(life)}; it is replaced when ${either([...own, ...pool])}`
}
