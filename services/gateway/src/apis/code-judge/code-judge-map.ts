/**
 * code-judge's shapes and their translation to and from sandfleet's, as pure functions.
 * Status mapping (also in the README):
 *
 * | sandfleet `status` | `run_success` | `reason` |
 * | --- | --- | --- |
 * | ok | true | '' |
 * | error, memory, killed | false | '' (the traceback is in `stderr`) |
 * | timeout | false | worker_timeout |
 * | overloaded, queue_timeout | false | queue_timeout |
 * | infra_error | false | internal_error |
 * | invalid_request (a configured limit) | false | invalid_input |
 *
 * A `cpp` submission is compiled and run once in a sandbox (a judge of one test: judged-run.ts); a
 * compile that failed is `run_success` false, `reason` '', the compiler's message in `stderr` and
 * `cost` 0, as code-judge answers it. When no runner judges C++ the request is code-judge's 422
 * naming `type`, never an `internal_error`.
 *
 * `success` is `run_success` and, when `expected_output` is given, stdout equal to it (both
 * stripped of surrounding whitespace). `cost` is the run time in seconds. The stdout of a run
 * that timed out ends with {@link CJ_TIMEOUT_LINE}, as code-judge's wrapper prints it. stdout is
 * cut at `stdoutChars` characters (code-judge's 1,000 by default), and the cut is said in stderr.
 */
import { randomUUID } from 'node:crypto'
import type { ExecRequest, ExecResult, JudgeRequest } from '@sandfleet/protocol'
import { truncationNote } from '../compat.ts'
import { runAsJudge } from '../judged-run.ts'
import type { ModelSpec } from '../fastapi/fastapi-errors.ts'
import type { JudgeResult, REASONS, RunResult } from './code-judge-schemas.ts'

export type { BatchResult, JudgeResult, RunResult } from './code-judge-schemas.ts'

/**
 * What code-judge's wrapper around a submission prints to stdout when its time limit fires (its
 * alarm handler, before it kills the run): its clients and its own tests look for it.
 */
export const CJ_TIMEOUT_LINE = 'Suicide from timeout.\n'

/** code-judge's `reason` values. */
export type Reason = (typeof REASONS)[number]

/** Submission `type`s code-judge accepts. */
export const CJ_TYPES = ['python', 'cpp'] as const

/** The submission `type`s run as a snippet (`/v1/execute`); the others are compiled (a judge of one test). */
export const CJ_SNIPPETS: ReadonlySet<string> = new Set(['python'])

/** The judge's language of a compiled submission `type`. */
export const CJ_COMPILED: Readonly<Record<string, string>> = Object.freeze({ cpp: 'cpp' })

/** The model of one submission. */
export const SUBMISSION_MODEL: ModelSpec = Object.freeze({
  sub_id: { kind: 'string', nullable: true, description: 'Echoed in the result (default: a new UUID)' },
  type: {
    kind: 'literal',
    values: CJ_TYPES,
    required: true,
    description: 'python, or cpp (C++17, g++: compiled once, then run; a 422 naming type when the fleet judges no C++)'
  },
  solution: { kind: 'string', required: true, description: 'The program' },
  input: { kind: 'string', nullable: true, description: 'Standard input' },
  expected_output: {
    kind: 'string',
    nullable: true,
    description: '/judge: stdout must equal it (both stripped) for success'
  }
})

/** The model of a batch (its items are checked with {@link SUBMISSION_MODEL}). */
export const BATCH_MODEL: ModelSpec = Object.freeze({
  sub_id: { kind: 'string', nullable: true, description: 'Echoed in the answer (default: a new UUID)' },
  type: { kind: 'literal', values: ['batch'], required: true },
  submissions: { kind: 'list', required: true, description: 'Submissions, answered in order' }
})

/** One code-judge submission, after validation. */
export interface Submission {
  sub_id?: string | null
  type: string
  solution: string
  input?: string | null
  expected_output?: string | null
}

/** A code-judge batch, after validation. */
export interface BatchSubmission {
  sub_id?: string | null
  type: 'batch'
  submissions: Submission[]
}

/** Limits given to every submission (code-judge has no per-submission limits). */
export interface SubmissionLimits {
  timeoutMs: number
  memoryMb: number
  /** A `cpp` submission's compile step (default the judge's 10 s). */
  compileTimeoutMs?: number
  /** Longest stdout a result carries, in characters (code-judge cuts at 1,000). */
  stdoutChars: number
}

/** code-judge's own defaults: what a caller of code-judge gets unless a deployment says otherwise. */
export const CJ_DEFAULT_LIMITS: Readonly<SubmissionLimits> = Object.freeze({
  timeoutMs: 10_000,
  memoryMb: 384,
  stdoutChars: 1000
})

/** A submission → an {@link ExecRequest}. */
export function toExecRequest(sub: Submission, limits: SubmissionLimits): ExecRequest {
  const req: ExecRequest = {
    language: 'python',
    code: sub.solution,
    timeout_ms: limits.timeoutMs,
    memory_mb: limits.memoryMb
  }
  if (typeof sub.input === 'string' && sub.input !== '') req.stdin = sub.input
  return req
}

/** A compiled submission (`cpp`) → the judge of one test that compiles and runs it. */
export function toJudgeRequest(sub: Submission, limits: SubmissionLimits): JudgeRequest {
  return runAsJudge({
    language: CJ_COMPILED[sub.type] ?? sub.type,
    code: sub.solution,
    stdin: typeof sub.input === 'string' ? sub.input : '',
    timeout_ms: limits.timeoutMs,
    memory_mb: limits.memoryMb,
    compile_timeout_ms: limits.compileTimeoutMs
  })
}

/** The reason code-judge gives for a sandfleet status. */
export function reasonOf(status: ExecResult['status']): Reason {
  switch (status) {
    case 'timeout':
      return 'worker_timeout'
    case 'overloaded':
    case 'queue_timeout':
      return 'queue_timeout'
    case 'infra_error':
      return 'internal_error'
    case 'invalid_request':
      return 'invalid_input'
    default:
      return ''
  }
}

/** code-judge's output comparison: equal once surrounding whitespace is stripped. */
export function outputMatches(stdout: string, expected: string): boolean {
  return stdout.trim() === expected.trim()
}

/** `text` cut to `chars` characters (whole code points): the cut text and whether it was cut. */
export function cutChars(text: string, chars: number): [string, boolean] {
  if (text.length <= chars) return [text, false]
  const points = Array.from(text)
  return points.length <= chars ? [text, false] : [points.slice(0, chars).join(''), true]
}

/** A sandfleet result → a `/run` result; stdout cut at `stdoutChars` characters. */
export function toRunResult(sub: Submission, result: ExecResult, stdoutChars = Infinity): RunResult {
  const runSuccess = result.status === 'ok'
  const expected = sub.expected_output
  const [stdout, cut] = cutChars(
    result.status === 'timeout' ? result.stdout + CJ_TIMEOUT_LINE : result.stdout,
    stdoutChars
  )
  return {
    sub_id: sub.sub_id ?? randomUUID(),
    success: runSuccess && (expected == null || outputMatches(result.stdout, expected)),
    run_success: runSuccess,
    cost: result.duration_ms / 1000,
    stdout,
    stderr:
      result.stderr + truncationNote(cut ? { truncated: { stdout: true, stderr: result.truncated.stderr } } : result),
    reason: reasonOf(result.status)
  }
}

/** A sandfleet result → a `/judge` result (the same, without the output). */
export function toJudgeResult(sub: Submission, result: ExecResult): JudgeResult {
  const { stdout: _o, stderr: _e, ...judge } = toRunResult(sub, result)
  return judge
}
