/**
 * What the compatibility layer needs from the gateway: a way to run one request, a batch, and
 * (for notebook semantics) sessions. The gateway passes its own routed, admitted execution path;
 * tests pass a fake. The compat plugins only translate shapes, they never run code themselves.
 */
import { failedResult, type ExecRequest, type ExecResult, type Language, type Status, STATUSES } from '@sandfleet/protocol'

/** Runs one request through the fleet. Resolves with a result for every outcome it can name. */
export type ExecuteFn = (request: ExecRequest) => Promise<ExecResult>

/** Runs many requests through the fleet; one result per request, in order. */
export type ExecuteBatchFn = (requests: ExecRequest[]) => Promise<ExecResult[]>

/** What a compat API needs to run cells in one state (SandboxFusion's /run_jupyter). */
export interface CompatSessions {
  /** Opens a session; resolves with its id. */
  create(options: { language: Language, ttl_s: number, memory_mb: number }): Promise<string>
  /** Runs one cell in the session's state. */
  execute(sessionId: string, cell: { code: string, timeout_ms: number, files?: Record<string, string>, fetch_files?: string[] }): Promise<ExecResult>
  /** Closes the session; never rejects for a session already gone. */
  close(sessionId: string): Promise<void>
}

const known: ReadonlySet<string> = new Set(STATUSES)

/**
 * Turns an exception thrown by the execution path into a result, so a compat API can answer in
 * its own shape. An error that carries a protocol `status` (a gateway error) or the fleet's
 * ErrorBody (a runner's refusal) keeps it; anything else is the fleet's fault: `infra_error`,
 * never a user status.
 */
export function resultOfThrown (err: unknown): ExecResult {
  const e = err as { status?: unknown, code?: unknown, message?: unknown, body?: { status?: unknown, error?: { code?: unknown, message?: unknown } } } | undefined
  // A refusal carrying the fleet's ErrorBody (a session closed or lost, a bad cell) keeps its status and code.
  const body = typeof e?.body?.error === 'object' && e.body.error !== null ? e.body : undefined
  const claimed = body?.status ?? e?.status
  const status: Status = typeof claimed === 'string' && known.has(claimed) ? claimed as Status : 'infra_error'
  const safe: Status = status === 'ok' || status === 'error' || status === 'timeout' || status === 'memory' || status === 'killed'
    ? 'infra_error'
    : status
  const code = body?.error?.code ?? e?.code
  const message = body?.error?.message ?? e?.message
  return failedResult(safe, typeof code === 'string' ? code : 'SF_ERR_GATEWAY_INTERNAL', typeof message === 'string' ? message : String(err))
}

/** Runs `fn` and turns a rejection into a result (see {@link resultOfThrown}). */
export async function settle (fn: () => Promise<ExecResult>): Promise<ExecResult> {
  try {
    return await fn()
  } catch (err) {
    return resultOfThrown(err)
  }
}

/** The note added to a compat answer's stderr when the fleet cut an output at its cap. */
export function truncationNote (result: Pick<ExecResult, 'truncated'>): string {
  const cut = [result.truncated.stdout ? 'stdout' : '', result.truncated.stderr ? 'stderr' : ''].filter(Boolean)
  return cut.length === 0 ? '' : `\n[sandfleet: ${cut.join(' and ')} truncated at the output cap]\n`
}
