/**
 * The one builder of a run's failed outcome, for every backend: a run stopped (timeout, memory),
 * killed, crashed, or refused before its code ran. What the code wrote before it ended comes
 * with it.
 */
import type { RunOutcome } from './contract.ts'
import type { RetireReason } from './retire-reasons.ts'

/** What a run wrote to its streams before it ended (nothing, when the sandbox cannot say). */
export interface Written {
  stdout?: unknown
  stderr?: unknown
  truncated?: { stdout?: unknown; stderr?: unknown }
}

/**
 * How a failed outcome differs from the default: run time, output so far, exit code (`error`: 1,
 * else null), the job's CPU when the sandbox measured it, and whether the sandbox retires and why
 * (default `broken`: a run that failed around its job leaves a sandbox nobody vouches for; `false`
 * when the sandbox put itself back).
 */
export interface FailedOptions {
  durationMs?: number
  written?: Written
  exitCode?: number | null
  cpuMs?: number
  retire?: RetireReason | false
}

/** The outcome of a run that did not end on its own terms, with error `{ type, message }`; see the module comment. */
export function failedOutcome(
  status: RunOutcome['status'],
  type: string,
  message: string,
  options: FailedOptions = {}
): RunOutcome {
  const w = options.written
  const outcome: RunOutcome = {
    status,
    stdout: typeof w?.stdout === 'string' ? w.stdout : '',
    stderr: typeof w?.stderr === 'string' ? w.stderr : '',
    exit_code: options.exitCode !== undefined ? options.exitCode : status === 'error' ? 1 : null,
    duration_ms: options.durationMs ?? 0,
    truncated: { stdout: w?.truncated?.stdout === true, stderr: w?.truncated?.stderr === true },
    error: { type, message },
    files: {}
  }
  if (options.cpuMs !== undefined) outcome.cpu_ms = options.cpuMs
  if (options.retire !== false) {
    outcome.retire = true
    outcome.retire_reason = options.retire ?? 'broken'
  }
  return outcome
}
