/**
 * The deployment's limits on the calls it takes (`maxCodeBytes`, `maxTimeoutMs`, `maxMemoryMb`,
 * and `maxBatchItems` on a native batch), checked once a call, on every route, by the pipeline's
 * limits stage (pipeline.ts): whatever API a call came through, it is held to them as the
 * `ExecRequest` it was mapped to. The contract's own bounds (the protocol's schemas) are the
 * parse stage's; these are the deployment's, never looser than the contract's (the config's
 * schema bounds each by it). A call over one is refused naming its field and the setting, as its
 * flag, that it passed. The same stage refuses a call whose `files` a sandbox could not decode
 * (not base64, a path that names no writable place: the protocol's `fileFieldsProblem`), so that
 * every API answers that mistake as the caller's, in its own shape, before anything runs.
 */
import { fileFieldsProblem, type ExecRequest, type JudgeRequest } from '@sandfleet/protocol'
import type { GatewayConfig } from '../config.ts'

/** The limits a deployment configures on its calls. */
export type CallLimits = Pick<GatewayConfig, 'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb' | 'maxBatchItems'>

/**
 * What a route's body asks the fleet for, as far as the limits see it: an `ExecRequest`'s limited
 * and decoded fields (a session cell has no `memory_mb`, a session's creation no `code`), and a judge's own: its
 * compile step's time limit and its checker's code (held to `maxTimeoutMs` and `maxCodeBytes` as
 * the program's are). A field that is not of its type is left to the route's parse stage and not
 * checked here.
 */
export type Call = Partial<Pick<ExecRequest, 'code' | 'timeout_ms' | 'memory_mb' | 'files'>> &
  Partial<Pick<JudgeRequest, 'compile_timeout_ms'>> & {
    /** A judge's checker (`compare.checker.code`): untrusted code run beside the program. */
    checker_code?: string
  }

/** The fields of a {@link Call} the limits name, as their paths in a request's body. */
export type LimitedField = 'code' | 'timeout_ms' | 'memory_mb' | 'compile_timeout_ms' | 'compare/checker/code'

/** A call over a limit: which call (its index in the route's calls), the field, and why. */
export interface OverLimit {
  /** The call's index in what the route declared; `undefined` when the calls together are too many. */
  index: number | undefined
  /**
   * The field at fault (`code`, `timeout_ms`, `memory_mb`, `files/PATH` for a file a sandbox could not decode; a
   * judge's `compile_timeout_ms`, `compare/checker/code`), or `requests` for too many calls.
   */
  field: LimitedField | 'requests' | `files/${string}`
  /** Says the value, the limit, and the setting that holds it. */
  message: string
}

/**
 * The first of `calls` over `limits`, or `undefined` when all are within them; `batch`: the calls are also held to
 * `maxBatchItems`.
 */
export function overLimit(calls: readonly Call[], limits: CallLimits, batch = false): OverLimit | undefined {
  if (batch && calls.length > limits.maxBatchItems) {
    return {
      index: undefined,
      field: 'requests',
      message: `requests has ${calls.length} items, over this deployment's limit of ${limits.maxBatchItems} (maxBatchItems, --max-batch-items)`
    }
  }
  for (let index = 0; index < calls.length; index++) {
    const over = callOverLimit(calls[index] as Call, limits)
    if (over !== undefined) return { index, ...over }
  }
  return undefined
}

/** `code` (named `field`) over `maxCodeBytes`, or undefined. */
function codeOverLimit(
  code: unknown,
  field: 'code' | 'compare/checker/code',
  limits: CallLimits
): Omit<OverLimit, 'index'> | undefined {
  // a UTF-16 unit is at most 3 UTF-8 bytes: a short string is within the limit without counting
  if (typeof code !== 'string' || code.length * 3 <= limits.maxCodeBytes) return undefined
  const bytes = Buffer.byteLength(code)
  if (bytes <= limits.maxCodeBytes) return undefined
  return {
    field,
    message: `${field === 'code' ? 'code' : 'the checker'} is ${bytes} bytes, over this deployment's limit of ${limits.maxCodeBytes} bytes (maxCodeBytes, --max-code-bytes)`
  }
}

function callOverLimit(call: Call, limits: CallLimits): Omit<OverLimit, 'index'> | undefined {
  const { timeout_ms: timeoutMs, memory_mb: memoryMb, compile_timeout_ms: compileMs } = call
  const code =
    codeOverLimit(call.code, 'code', limits) ?? codeOverLimit(call.checker_code, 'compare/checker/code', limits)
  if (code !== undefined) return code
  for (const [field, ms] of [
    ['timeout_ms', timeoutMs],
    ['compile_timeout_ms', compileMs]
  ] as const) {
    if (typeof ms === 'number' && ms > limits.maxTimeoutMs)
      return {
        field,
        message: `${field} ${ms} is over this deployment's limit of ${limits.maxTimeoutMs} (maxTimeoutMs, --max-timeout-ms)`
      }
  }
  if (typeof memoryMb === 'number' && memoryMb > limits.maxMemoryMb) {
    return {
      field: 'memory_mb',
      message: `memory_mb ${memoryMb} is over this deployment's limit of ${limits.maxMemoryMb} (maxMemoryMb, --max-memory-mb)`
    }
  }
  const undecodable = call.files === undefined ? undefined : fileFieldsProblem(call)
  if (undecodable !== undefined) return { field: undecodable.field as `files/${string}`, message: undecodable.message }
  return undefined
}

/** What the limits stage holds a judge to: its program, its checker, its time and memory limits. */
export function judgeCall(request: JudgeRequest): Call {
  const call: Call = {
    code: request.code,
    timeout_ms: request.timeout_ms,
    memory_mb: request.memory_mb,
    compile_timeout_ms: request.compile_timeout_ms
  }
  const compare = request.compare
  if (typeof compare === 'object' && compare !== null && 'checker' in compare) call.checker_code = compare.checker.code
  return call
}
