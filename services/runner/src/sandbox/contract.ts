/**
 * The driver interface: how the runner's pool talks to one kind of sandbox.
 *
 * A {@link Driver} knows how to make {@link Sandbox}es of one backend (process, docker,
 * pyodide, javascript). The pool, the queue, deadlines, replacement and statistics are written
 * once in `pool/` and reused by every driver; a new backend is one new folder in `backends/`
 * and one line in `runner/driver-registry.ts`. This module imports no implementation, and
 * nothing above the sandbox layer (docs/ARCHITECTURE.md, "The runner's floors").
 *
 * Contract every driver keeps:
 * - `Sandbox.execute()` runs exactly one job at a time and resolves with a {@link RunOutcome}
 *   whose status is one of the user statuses (`ok`, `error`, `timeout`, `memory`, `killed`)
 *   whenever the user's code ran. It rejects (with an `SF_ERR_…` error) only for faults of the
 *   fleet, when the code cannot be blamed (spawn failure, protocol violation by the driver's own
 *   side); the pool then answers `infra_error` and replaces the sandbox.
 * - At `timeout_ms` the sandbox makes the stops only it can make (the executor's SIGTERM and
 *   SIGKILL, isolated-vm's timeouts, an interrupt) and answers `timeout` with what the code
 *   wrote, within the driver's {@link Driver.stopMs}. The hard deadline is the pool's, one timer
 *   per job (`pool/job-deadline.ts`): a sandbox that has not answered by `timeout_ms` +
 *   `stopMs` + the runner's `graceMs` has its job answered `infra_error` (stalled: a backstop
 *   catches the fleet's fault, never the code's `timeout`) and is retired, and its `close()`
 *   is the hard kill. A sandbox that keeps a job waiting before it runs (an executor tier still
 *   warming) says so through {@link JobWatch.waiting}, which moves that deadline once, to the
 *   job's `startBy` + the same.
 * - After an outcome with `retire: true` and its `retire_reason` (what the sandbox could not undo
 *   after the job: a process that survived, state it could not put back, its own process or
 *   interpreter broken) the pool closes the sandbox and starts a replacement; it is never given
 *   another job. After any other outcome, `timeout`, `memory` and `killed` included, the sandbox
 *   takes the next job: a driver keeps its sandbox through a job's end wherever it can stop the
 *   job and put the sandbox back.
 * - `close()` is safe to call twice and leaves nothing behind (no process, container, cgroup).
 */
import type {
  ExecResult,
  IsolationLevel,
  Language,
  ResolvedExecRequest,
  RuntimeEnvironment,
  SandboxManifest
} from '@sandfleet/protocol'
import type { Logger } from '../logger.ts'
import type { RetireReason, SandboxLife } from './retire-reasons.ts'

/** Names of the shipped drivers. `unsafe` runs the executor with no isolation (a flag, with a warning). */
export type DriverName = 'process' | 'docker' | 'pyodide' | 'javascript' | 'unsafe'

/**
 * Largest file a Python job may write, in MiB, on every backend: the executor's `RLIMIT_FSIZE`
 * (`SANDFLEET_MAX_FILE_MB`, which the process and docker drivers give it) and the cap of the
 * pyodide file system. As on Linux, a write that would cross it writes up to it, a write or a
 * truncate past it fails with `EFBIG` (an `OSError`, "File too large").
 */
export const SANDBOX_MAX_FILE_MB = 64

/**
 * The hostname code sees in a process or docker sandbox (its own UTS namespace): never the host's, which in a fleet's
 * runner container is the container's id.
 */
export const SANDBOX_HOSTNAME = 'sandbox'

/** Lifecycle of one sandbox. */
export type SandboxState = 'starting' | 'ready' | 'busy' | 'closing' | 'closed'

/**
 * One program of a judge as a sandbox that judges runs it (the runner sends each language's argv: the executor knows
 * nothing of languages but Python's).
 */
export interface JudgeProgram {
  /** `python`: compiled to bytecode in the sandbox, each test a fork; `binary`: compiled once, each test an exec. */
  readonly runtime: 'python' | 'binary'
  /** The file the code is written to for its compiler. */
  readonly source: string
  readonly code: string
  /** The compiler's argv (a binary not in the compile cache). */
  readonly compile?: readonly string[]
  /** The file the compiler writes. */
  readonly output?: string
  /** How each run execs the binary (argv[0] names it). */
  readonly run?: readonly string[]
  /** The compile cache's bytes: the sandbox runs them and compiles nothing. */
  readonly binary?: Buffer
}

/** What the sandbox says of one run of a judge (a compile step, or a test). */
export interface JudgeRun {
  /** As a job's: `ok`, `error` (a non-zero exit, a Python exception), `timeout`, `memory`, `killed` (a signal). */
  readonly status: 'ok' | 'error' | 'timeout' | 'memory' | 'killed'
  readonly exit_code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly duration_ms: number
  readonly cpu_ms?: number
  readonly truncated: { stdout: boolean; stderr: boolean }
  readonly error: ExecResult['error']
}

/** A compile step that ran in the sandbox; `binary`: what its compiler wrote, when it succeeded. */
export interface JudgeCompiled extends JudgeRun {
  readonly step: 'program' | 'checker'
  readonly binary?: Buffer
}

/** A test that ran in the sandbox. */
export interface JudgeTested extends JudgeRun {
  readonly index: number
  /** A call test: the function's return value, as JSON text. */
  readonly returned?: string
  /** A call test whose value is not JSON (or too long): why. */
  readonly returned_error?: string
  /** The checker's run on this test, when the judge has a checker. */
  readonly checker?: Pick<JudgeRun, 'status' | 'exit_code' | 'stdout' | 'stderr' | 'error'>
}

/** Where a sandbox sends what a judge's runs produced, as each ends. */
export interface JudgeSink {
  /** The judge starts in a sandbox (again, from the start, when the pool gives it to another). */
  begin(): void
  compiled(step: JudgeCompiled): void
  /** A test ended; true when the judge should stop before its next test (the runner found it failed). */
  tested(test: JudgeTested): boolean
}

/** A judge's work in a sandbox that judges ({@link Driver.judges}): compile once, then each test in a fresh process. */
export interface JudgeWork {
  readonly program: JudgeProgram
  readonly checker?: JudgeProgram
  /** The expected output of each test, for the checker (sent only with one). */
  readonly answers?: readonly string[]
  /** Each test's stdin, and a call test's function and arguments (JSON). */
  readonly tests: ReadonlyArray<{ readonly stdin: string; readonly call?: readonly [string, string] }>
  readonly timeoutMs: number
  readonly memoryMb: number
  readonly compileTimeoutMs: number
  readonly compileMemoryMb: number
  readonly checkerTimeoutMs: number
  /** Most bytes kept of each run's stdout and stderr; a test past it is `output_limit`. */
  readonly maxOutputBytes: number
  /** Stop after a run that failed (the sandbox's own finding: a non-zero exit, a limit). */
  readonly stopOnFailure: boolean
  /**
   * How far the sandbox may run ahead of the runner's comparisons: test i starts once the runner has found tests up to
   * i - ackWindow passed (each `tested` answered with an ack, or the stop). 0: no acks (the sandbox's own findings, or
   * every test runs).
   */
  readonly ackWindow: number
  readonly sink: JudgeSink
}

/**
 * One job handed to a sandbox. A pool's jobs are made once, complete and frozen, by the runner's
 * `prepareCall` ({@link PooledJob}); nothing writes into a job afterwards.
 */
export interface Job {
  /** The request, defaults applied and validated against the runner's limits. */
  readonly request: ResolvedExecRequest
  /** Most bytes kept of stdout and of stderr each; the rest is read and dropped, marked truncated. */
  readonly maxOutputBytes: number
  /**
   * The job's one deadline for waiting: the latest moment it may start, on the runner's
   * `performance.now()` clock. Fixed once, when the call is prepared (its context's deadline,
   * capped by the runner's `queueTimeoutMs`), it holds in the pool's queue and in the sandbox,
   * which may keep the job waiting until then (an executor tier still warming); past it,
   * `queue_timeout`, never run. Absent (a job made outside a pool): the sandbox's own limit.
   */
  readonly startBy?: number
  /**
   * A judge: the sandbox compiles and runs `judge` instead of `request.code` (only a driver that {@link Driver.judges}
   * is given one). `request` then holds what the pool reads of it: its `timeout_ms` bounds each step (a compile, or a
   * test and its check), and the sandbox says, through {@link JobWatch.progressed}, when each one ended.
   */
  readonly judge?: JudgeWork
  /**
   * The tenant the job runs for (its call context's; absent: the one tenant of a fleet without
   * API keys). A sandbox never runs jobs of two tenants in one reused process (`isolation:
   * reuse`), and the pool gives a job to an idle sandbox that last ran its tenant's when it has one.
   */
  readonly tenant?: string
}

/** A job as a pool takes it: prepared (`requests/prepared-call.ts`), its deadline for waiting fixed. */
export type PooledJob = Job & { readonly startBy: number }

/** What a sandbox may tell its pool about the job it holds (the pool passes one with each job). */
export interface JobWatch {
  /** The job waits in the sandbox before it runs, at most until its `startBy` (an executor tier still warming). */
  waiting(): void
  /**
   * The job has reached the sandbox only now: a frame larger than the stream's buffer (a large
   * stdin, files) goes out over many turns of the event loop, slower the busier the runner. The
   * job's time counts from here; its delivery had the deadline's time of its own. Called again
   * when the sandbox says such a job reached the process that runs it only now.
   */
  delivered?(): void
  /**
   * A step of a judge ended (a compile, a test): the job's hard deadline counts its next step's time from here (never
   * earlier than it did).
   */
  progressed?(): void
}

/** What one run produced: the user-code part of an {@link ExecResult}. */
export interface RunOutcome {
  /**
   * A user-code status; `queue_timeout` when the job never ran because its `startBy` passed
   * first; `infra_error` when the sandbox cannot answer for a job it ran (a reused process that
   * broke the executor's protocol: SF_ERR_RUNNER_REUSE_VIOLATION, the fleet's status, retriable).
   */
  status: 'ok' | 'error' | 'timeout' | 'memory' | 'killed' | 'queue_timeout' | 'infra_error'
  stdout: string
  stderr: string
  exit_code: number | null
  duration_ms: number
  truncated: { stdout: boolean; stderr: boolean }
  error: ExecResult['error']
  files: Record<string, string>
  /** The requested `fetch_files` not returned, with the reason; absent when every one was. */
  fetch_errors?: Record<string, string>
  /**
   * True when this sandbox must not run another job: something of the job could not be undone, or
   * the driver's own job limit was reached. A job's end (`timeout`, `memory`, `killed`) is not a
   * reason by itself: a sandbox that could stop the job and put itself back serves on.
   */
  retire?: boolean
  /** With `retire`: why (the replacement's metric label). */
  retire_reason?: RetireReason
  /**
   * The job's own CPU time, user + system, in ms, as the kernel (or the isolate) counts it; absent
   * when the sandbox could not measure it.
   */
  cpu_ms?: number
  /** The executor's zygote tier the job was forked from (`bare`, `sci`), when the executor says. */
  tier?: string
  /** How long the job waited in the sandbox, before it ran, for its tier to warm: queue time, not run time. */
  waited_ms?: number
  /** The isolation level the job ran at, on a backend with levels. */
  isolation?: IsolationLevel
  /** A session's cell: the display of its value and figures. */
  display?: ExecResult['display']
  /** A session's cell: the process that holds the session's state after it, when the session host says. */
  pid?: number
}

/**
 * What an executor backend tells about the `reuse` level, for the metrics: a job that asked for it
 * ran at `level` (`refused`: why not in a reused process: `static`, its code names what the check
 * cannot follow; `warming`, no reuse process was ready; `unsupported`, this interpreter cannot be
 * checked), or a reuse process retired (`reason`: what its check found, `taint`, `exit`, `timeout`, …).
 */
export type ReuseEvent =
  { kind: 'ran'; level: IsolationLevel; refused: string | undefined } | { kind: 'retired'; reason: string }

/** What a driver reports besides results. */
export interface DriverEvents {
  reuse?: (event: ReuseEvent) => void
}

/** A sandbox's own counters, for /metrics and the load report. */
export interface SandboxStats {
  jobs: number
  /** Resident memory of the sandbox in bytes, when the driver can measure it. */
  memoryBytes?: number
}

/** One pre-warmed sandbox, owned by the pool. */
export interface Sandbox {
  /** Unique within the runner, e.g. `process-3`; reported in every result. */
  readonly id: string
  readonly state: SandboxState
  /** Boots the sandbox until it can run a job (interpreter warm). Rejects with a clear message. */
  start(): Promise<void>
  /** Runs one job; see the contract above. */
  execute(job: Job, watch?: JobWatch): Promise<RunOutcome>
  stats(): SandboxStats
  /**
   * Registers `listener`, called once if the sandbox dies on its own (its container or process
   * ended without {@link close}), so that the pool replaces an idle sandbox at once instead of
   * handing it the next job. Optional: a driver without it is found dead by its next job.
   */
  onExit?(listener: () => void): void
  /**
   * Which of its own limits the sandbox is at now, read from outside it (the kernel's counts, through its engine), in a
   * few words (`"its processes fill its limit (128 of 128)"`); undefined when it is at none or cannot say. Asked when a
   * job's hard deadline passes with no answer: a sandbox whose processes fill its limit was kept from answering by the
   * job's own code (a fork bomb starves the executor that must stop it), not stalled by the fleet. Optional.
   */
  exhausted?(): Promise<string | undefined>
  /** Stops the sandbox and frees everything it holds. Idempotent. */
  close(): Promise<void>
}

/** What the driver protects against, said at start-up and on /v1/info. */
export interface IsolationReport {
  driver: DriverName
  /** One line: the boundary, e.g. "bubblewrap namespaces (no network, read-only root) + cgroup memory/pids limits". */
  boundary: string
  /** What that boundary does and does not protect against, one item a property. */
  properties: string[]
}

/**
 * How to start one process that speaks the executor protocol (executor.py, session_host.py):
 * the program, its arguments, and extra spawn settings (`executor/spawn.ts` starts it).
 */
export interface ExecutorCommand {
  file: string
  args: string[]
  env?: NodeJS.ProcessEnv
  /**
   * Bytes written to the process's fds 3, 4, … in order, each then closed (bubblewrap reads its
   * seccomp filter and the files it is handed with `--ro-bind-data` there).
   */
  fds?: readonly Buffer[]
}

/**
 * Jobs a sandbox runs before it is replaced, by default (`maxJobsPerSandbox`). A safety valve,
 * not a cleaner (every job is a fresh fork; its files, IPC objects and processes go after it). A
 * new sandbox costs seconds of CPU until its tiers are warm, so a small default would be paid by
 * every job, in bursts (benchmarks/RESULTS.md, "Figures that were in code comments"). The
 * runner's default and the docker driver's own.
 */
export const DEFAULT_MAX_JOBS_PER_SANDBOX = 100_000

/**
 * What a driver is made with: the runner's settings it reads (each backend names those keys in
 * its folder's config file; the runner passes its whole configuration), a logger, and where its
 * events go.
 */
export interface DriverOptions<Settings extends object = object> {
  config: Settings
  logger: Logger
  events?: DriverEvents
}

/** A backend: makes sandboxes of one kind. */
export interface Driver {
  readonly name: DriverName
  readonly languages: readonly Language[]
  /**
   * Checks the prerequisites (binaries, image, engine) once at start-up. Rejects with an error
   * whose message says what is missing and how to fix it, never a stack trace.
   */
  check(): Promise<void>
  /**
   * Most sandboxes of this driver worth keeping in one pool: past it they add CPU per job and no
   * throughput, so the runner caps the pool at it. Absent: the configured pool size.
   */
  readonly maxPoolSize?: number
  /**
   * How long past `timeout_ms` this driver's own stops take to end a job and answer (the soft
   * stop's grace, reading what a stopped job wrote); the pool's hard deadline adds it. Absent: 0.
   */
  readonly stopMs?: number
  /**
   * How its sandboxes live through their jobs: the job ends they serve on after, the reasons they retire with. The
   * runner adds the line it makes (`lifeLine`) to {@link describe}'s report. Absent: the report says nothing of it.
   */
  readonly life?: SandboxLife
  /**
   * Whether its sandboxes judge a whole program in one job ({@link Job.judge}: the executor's `judge` frame). Absent:
   * a judge of its language runs one job a test, compared by the runner.
   */
  readonly judges?: boolean
  /** Makes a sandbox, not yet started. */
  createSandbox(id: string): Sandbox
  describe(): IsolationReport
  /**
   * A Python backend's environment (Python and package versions, where it comes from), read from a sandbox of its kind
   * (or its image) by `check()`, for /v1/info. Absent or undefined: not known (a backend of another language).
   */
  manifest?(): SandboxManifest | undefined
  /**
   * What runs this backend's code (runtime, version, packages), read by `check()`, for /v1/info. Absent: a Python
   * backend's is its {@link manifest}'s, run by CPython.
   */
  environment?(): RuntimeEnvironment | undefined
  /**
   * How to run `session_host.py` (stateful sessions) inside this driver's kind of sandbox, for
   * a host directory that will hold the sessions' Unix sockets. Absent: this backend holds no
   * sessions.
   */
  sessionHost?(socketDir: string): ExecutorCommand
  /** Frees shared resources (a host process, an engine connection). Idempotent. */
  close(): Promise<void>
}
