/**
 * The judge's frames of the executor protocol (docs/executor-protocol.md, "Judging"), as the runner writes and reads
 * them: the `judge` frame of a {@link JudgeWork}, the `compiled` and `tested` frames the executor answers with while it
 * runs, and the `judge_ack` and `judge_stop` the runner sends as it compares. The executor channel speaks them. Like
 * the `exec` frame (`ExecFrame`), every field of a frame the runner writes is present, null where it has no value: the
 * executor parses each once into its frozen type (`JudgeJob`, `JudgeAck`, `JudgeStop` in
 * sandbox-images/python/sandfleet_sandbox/judge_frames.py) and refuses one without a field (`BadFrame`).
 */
import type { IsolationLevel } from '@sandfleet/protocol'
import type { Job, JudgeCompiled, JudgeProgram, JudgeRun, JudgeTested, JudgeWork } from '../../sandbox/contract.ts'

/** A program or checker of a `judge` frame: its `JudgeProgram`, null where it has no value, the binary in base64. */
export interface JudgeProgramFrame {
  runtime: JudgeProgram['runtime']
  source: string
  code: string
  /** The compiler's argv; null for Python, or with `binary`. */
  compile: readonly string[] | null
  /** The file the compiler writes; null for Python, or with `binary`. */
  output: string | null
  /** The binary's argv; null for Python. */
  run: readonly string[] | null
  /** The compile cache's binary, base64; null: compile it. */
  binary: string | null
}

/** One test of a `judge` frame: its stdin, and a call test's `[function, arguments as JSON]` (null: none). */
export interface JudgeTestFrame {
  stdin: string
  call: readonly [string, string] | null
}

/** The `judge` frame: one judge, every field present (the executor's `JudgeJob`). */
export interface JudgeFrame {
  op: 'judge'
  /** The channel's own id of the job, echoed by every frame about it. */
  id: string
  program: JudgeProgramFrame
  /** The checker; null: the runner compares. */
  checker: JudgeProgramFrame | null
  /** Each test's expected output, for the checker alone; null without one. */
  answers: readonly string[] | null
  tests: JudgeTestFrame[]
  timeout_ms: number
  memory_mb: number
  compile_timeout_ms: number
  compile_memory_mb: number
  checker_timeout_ms: number
  max_output_bytes: number
  stop_on_failure: boolean
  ack_window: number
  isolation: IsolationLevel
  /** The tenant the judge runs for; null: the one tenant of a fleet without API keys. */
  tenant: string | null
  /** What is left of the job's queue budget: its longest wait for a warming tier; null: no limit. */
  wait_ms: number | null
}

/** The `judge_ack` frame: the runner found test `index` of judge `id` passed. */
export interface JudgeAckFrame {
  op: 'judge_ack'
  id: string
  index: number
}

/** The `judge_stop` frame: the runner found a test of judge `id` failed; no more of its tests run. */
export interface JudgeStopFrame {
  op: 'judge_stop'
  id: string
}

/** The `judge` frame of `job`, whose work is `judge`, as executor job `id`; `waitMs`: what is left of its wait. */
export function judgeFrame(id: string, job: Job, judge: JudgeWork, waitMs: number | null): string {
  const frame: JudgeFrame = {
    op: 'judge',
    id,
    program: programFrame(judge.program),
    checker: judge.checker === undefined ? null : programFrame(judge.checker),
    answers: judge.checker === undefined ? null : (judge.answers ?? null),
    tests: judge.tests.map((t) => ({ stdin: t.stdin, call: t.call ?? null })),
    timeout_ms: judge.timeoutMs,
    memory_mb: judge.memoryMb,
    compile_timeout_ms: judge.compileTimeoutMs,
    compile_memory_mb: judge.compileMemoryMb,
    checker_timeout_ms: judge.checkerTimeoutMs,
    max_output_bytes: judge.maxOutputBytes,
    stop_on_failure: judge.stopOnFailure,
    ack_window: judge.ackWindow,
    isolation: job.request.isolation,
    tenant: job.tenant ?? null,
    wait_ms: waitMs
  }
  return JSON.stringify(frame)
}

/** The `judge_stop` frame of executor job `id`. */
export function judgeStopFrame(id: string): string {
  const frame: JudgeStopFrame = { op: 'judge_stop', id }
  return JSON.stringify(frame)
}

/** The `judge_ack` frame of executor job `id`: the runner found test `index` passed. */
export function judgeAckFrame(id: string, index: number): string {
  const frame: JudgeAckFrame = { op: 'judge_ack', id, index }
  return JSON.stringify(frame)
}

function programFrame(p: JudgeProgram): JudgeProgramFrame {
  return {
    runtime: p.runtime,
    source: p.source,
    code: p.code,
    compile: p.compile ?? null,
    output: p.output ?? null,
    run: p.run ?? null,
    binary: p.binary === undefined ? null : p.binary.toString('base64')
  }
}

const STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'timeout', 'memory', 'killed'])

/* eslint-disable @typescript-eslint/no-explicit-any -- a frame's fields are read as the protocol defines them */

/** The run a frame reports, each field checked (a status outside the protocol's is `killed`: it did not end well). */
function runOf(frame: any): JudgeRun {
  const run: JudgeRun = {
    status: STATUSES.has(frame.status) ? frame.status : 'killed',
    exit_code: Number.isInteger(frame.exit_code) ? frame.exit_code : null,
    stdout: typeof frame.stdout === 'string' ? frame.stdout : '',
    stderr: typeof frame.stderr === 'string' ? frame.stderr : '',
    duration_ms: typeof frame.duration_ms === 'number' ? frame.duration_ms : 0,
    truncated: {
      stdout: frame.truncated?.stdout === true,
      stderr: frame.truncated?.stderr === true
    },
    error:
      typeof frame.error?.type === 'string' ? { type: frame.error.type, message: String(frame.error.message) } : null
  }
  return typeof frame.cpu_ms === 'number' && frame.cpu_ms >= 0 ? { ...run, cpu_ms: frame.cpu_ms } : run
}

/** A `compiled` frame. */
export function compiledOf(frame: any): JudgeCompiled {
  const step = frame.step === 'checker' ? 'checker' : 'program'
  const binary = typeof frame.binary === 'string' ? Buffer.from(frame.binary, 'base64') : undefined
  return binary === undefined ? { ...runOf(frame), step } : { ...runOf(frame), step, binary }
}

/** A `tested` frame. */
export function testedOf(frame: any): JudgeTested {
  const tested: JudgeTested = { ...runOf(frame), index: Number(frame.index) }
  const extra: { -readonly [K in keyof JudgeTested]?: JudgeTested[K] } = {}
  if (typeof frame.returned === 'string') extra.returned = frame.returned
  if (typeof frame.returned_error === 'string') extra.returned_error = frame.returned_error
  if (frame.checker !== undefined && frame.checker !== null) {
    const { status, exit_code, stdout, stderr, error } = runOf(frame.checker)
    extra.checker = { status, exit_code, stdout, stderr, error }
  }
  return { ...tested, ...extra }
}
