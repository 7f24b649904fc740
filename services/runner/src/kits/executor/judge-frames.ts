/**
 * The judge's frames of the executor protocol (docs/executor-protocol.md, "Judging"), as the runner writes and reads
 * them: the `judge` frame of a {@link JudgeWork}, the `compiled` and `tested` frames the executor answers with while it
 * runs, and the `judge_stop` the runner sends when it found a test failed. The executor channel speaks them.
 */
import type { Job, JudgeCompiled, JudgeProgram, JudgeRun, JudgeTested, JudgeWork } from '../../sandbox/contract.ts'

/** The `judge` frame of `job`, whose work is `judge`, as executor job `id`; `waitMs`: what is left of its wait. */
export function judgeFrame(id: string, job: Job, judge: JudgeWork, waitMs: number | undefined): string {
  return JSON.stringify({
    op: 'judge',
    id,
    program: programFrame(judge.program),
    checker: judge.checker === undefined ? null : programFrame(judge.checker),
    answers: judge.checker === undefined ? null : judge.answers,
    tests: judge.tests.map((t) => (t.call === undefined ? { stdin: t.stdin } : { stdin: t.stdin, call: t.call })),
    timeout_ms: judge.timeoutMs,
    memory_mb: judge.memoryMb,
    compile_timeout_ms: judge.compileTimeoutMs,
    compile_memory_mb: judge.compileMemoryMb,
    checker_timeout_ms: judge.checkerTimeoutMs,
    max_output_bytes: judge.maxOutputBytes,
    stop_on_failure: judge.stopOnFailure,
    ack_window: judge.ackWindow,
    isolation: job.request.isolation,
    tenant: job.tenant,
    wait_ms: waitMs
  })
}

/** The `judge_stop` frame of executor job `id`. */
export function judgeStopFrame(id: string): string {
  return JSON.stringify({ op: 'judge_stop', id })
}

/** The `judge_ack` frame of executor job `id`: the runner found test `index` passed. */
export function judgeAckFrame(id: string, index: number): string {
  return JSON.stringify({ op: 'judge_ack', id, index })
}

function programFrame(p: JudgeProgram): Record<string, unknown> {
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
