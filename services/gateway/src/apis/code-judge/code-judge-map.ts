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
 * | (a `cpp` submission: not run) | false | internal_error |
 *
 * `success` is `run_success` and, when `expected_output` is given, stdout equal to it (both
 * stripped of surrounding whitespace). `cost` is the run time in seconds. The stdout of a run
 * that timed out ends with {@link CJ_TIMEOUT_LINE}, as code-judge's wrapper prints it. stdout is
 * cut at `stdoutChars` characters (code-judge's 1,000 by default), and the cut is said in stderr.
 */
import { randomUUID } from 'node:crypto'
import { failedResult, type ExecRequest, type ExecResult } from '@sandfleet/protocol'
import { truncationNote } from '../compat.ts'
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

/** The submission `type`s sandfleet runs; another valid `type` is answered `internal_error`, unrun. */
export const CJ_RUNNABLE: ReadonlySet<string> = new Set(['python'])

/** The model of one submission. */
export const SUBMISSION_MODEL: ModelSpec = Object.freeze({
  sub_id: { kind: 'string', nullable: true, description: 'Echoed in the result (default: a new UUID)' },
  type: {
    kind: 'literal',
    values: CJ_TYPES,
    required: true,
    description: 'python (cpp is accepted and answered internal_error, unrun)'
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

/**
 * A submission sandfleet does not run (`cpp`): its result, `internal_error`, as code-judge answers what it cannot run.
 */
export function unrunnableResult(sub: Submission): ExecResult {
  const message = `sandfleet runs python submissions only; this ${sub.type} submission was not run`
  return failedResult('infra_error', 'SF_ERR_GATEWAY_UNSUPPORTED_LANGUAGE', message, { stderr: message + '\n' })
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
