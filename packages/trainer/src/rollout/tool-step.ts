/**
 * One turn's tool calls: run the parsed ones through the fleet (concurrently, each on its own),
 * turn parse failures, unknown tool names, code errors, timeouts and fleet faults into text for
 * the model, and keep every call's status (`parse_error` for a call that could not run as
 * written). Nothing here throws but an abort.
 */
import { failedResult, type ExecRequest, type ExecResult, type IsolationLevel } from '@sandfleet/protocol'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import { formatToolResult, type ResultStyle, type TruncateOptions } from '../tools/format.ts'
import { DEFAULT_TOOL_NAMES, type ToolCall } from '../tools/parse.ts'
import type { ToolCallRecord } from './trajectory.ts'

/** What the loop needs of the fleet: `SandfleetClient` and `Session` both fit. */
export interface ToolExecutor {
  execute(req: ExecRequest, options?: { signal?: AbortSignal }): Promise<ExecResult>
}

/** How tool calls run and how their results are shown. */
export interface ToolStepOptions {
  /** Time limit of one call in the sandbox, ms (default 5000). */
  timeoutMs?: number
  memoryMb?: number
  /**
   * Isolation level of each call (default: the runner's): `reuse` for the trainer's own rollouts (README, "Isolation
   * levels").
   */
  isolation?: IsolationLevel
  /** Result style (default `rstar2`). */
  style?: ResultStyle
  /** Truncation of one result (default 2000 characters, both ends kept: `middle`). */
  truncate?: TruncateOptions
  /** Most calls run per turn (verl's `max_parallel_calls`, default 1); later ones are answered with an error text. */
  maxParallelCalls?: number
  /**
   * Tool names the model may call (default {@link DEFAULT_TOOL_NAMES}); another name is answered with an error text.
   */
  toolNames?: readonly string[]
}

async function runOne(
  fleet: ToolExecutor,
  call: ToolCall & { ok: true },
  options: ToolStepOptions,
  signal?: AbortSignal
): Promise<ExecResult> {
  const req: ExecRequest = {
    language: 'python',
    code: call.code,
    stdin: call.stdin,
    timeout_ms: options.timeoutMs ?? 5000,
    ...(options.memoryMb ? { memory_mb: options.memoryMb } : {}),
    ...(options.isolation === undefined ? {} : { isolation: options.isolation })
  }
  try {
    return await fleet.execute(req, signal ? { signal } : {})
  } catch (err) {
    if (signal?.aborted)
      throw new TrainerError(TRAINER_ERROR_CODES.ABORTED, 'the episode was aborted during a tool call', 499, {
        cause: err
      })
    // a client that throws (closed, session lost) is the fleet's fault, never the model's
    const e = err as { code?: string; message?: string }
    return failedResult('infra_error', e.code ?? 'Error', e.message ?? String(err))
  }
}

/** Runs a turn's calls; records come back in call order. */
export async function runToolStep(
  fleet: ToolExecutor,
  calls: readonly ToolCall[],
  turn: number,
  options: ToolStepOptions = {},
  signal?: AbortSignal
): Promise<ToolCallRecord[]> {
  const style = options.style ?? 'rstar2'
  const trunc = options.truncate ?? { maxChars: 2000, side: 'middle' }
  const max = options.maxParallelCalls ?? 1
  const names = options.toolNames ?? DEFAULT_TOOL_NAMES
  return await Promise.all(
    calls.map(async (call, k): Promise<ToolCallRecord> => {
      const started = Date.now()
      if (!call.ok || k >= max || !names.includes(call.name)) {
        const reason = !call.ok
          ? call.reason
          : k >= max
            ? `at most ${max} tool calls run per turn; this one did not run`
            : `unknown tool "${call.name}"; the tools are ${names.join(', ')}`
        return {
          turn,
          status: 'parse_error',
          code: call.ok ? call.code : '',
          stdin: call.ok ? call.stdin : '',
          parseError: reason,
          text: formatToolResult({ parseError: reason }, style),
          wallMs: 0
        }
      }
      const result = await runOne(fleet, call, options, signal)
      return {
        turn,
        status: result.status,
        code: call.code,
        stdin: call.stdin,
        text: formatToolResult(result, style, trunc),
        result,
        wallMs: Date.now() - started
      }
    })
  )
}
