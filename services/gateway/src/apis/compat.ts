/**
 * What the compatible APIs share: what each needs from the gateway (a way to run one request, a
 * batch, and for notebook semantics sessions), given by {@link compatPath} from the gateway's
 * router and sessions (tests pass a fake), and the turning of what that path throws into a
 * result. The compat plugins only translate shapes, they never run code themselves; the
 * pipeline has held their calls to the limits, quotas and admission before their handlers run,
 * and made the request's call context, which their handlers hand to the path with each call.
 */
import {
  failedJudgeResult,
  failedResult,
  withDeadline,
  type CallContext,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeVerdict,
  type Language,
  type Status,
  STATUSES
} from '@sandfleet/protocol'
import { judgedLanguages, type JudgedLanguages } from '../runners/judged-languages.ts'
import type { ApiContext } from './api.ts'

/**
 * Runs one request through the fleet, in the context of the request that asks for it. Resolves
 * with a result for every outcome it can name.
 */
export type ExecuteFn = (request: ExecRequest, context: CallContext) => Promise<ExecResult>

/** Runs many requests through the fleet, in the context of the request that asks; one result per request, in order. */
export type ExecuteBatchFn = (requests: ExecRequest[], context: CallContext) => Promise<ExecResult[]>

/**
 * Judges one program through the fleet (a compiled program's run, too), in the context of the request that asks for
 * it. Resolves with a result for every outcome.
 */
export type JudgeFn = (request: JudgeRequest, context: CallContext) => Promise<JudgeResult>

/** Judges many through the fleet, in the context of the request that asks; one result per request, in order. */
export type JudgeBatchFn = (requests: JudgeRequest[], context: CallContext) => Promise<JudgeResult[]>

/** What a compat API needs to run cells in one state (SandboxFusion's /run_jupyter). */
export interface CompatSessions {
  /** Opens a session; resolves with its id. */
  create(options: { language: Language; ttl_s: number; memory_mb: number }): Promise<string>
  /** Runs one cell in the session's state. */
  execute(
    sessionId: string,
    cell: { code: string; timeout_ms: number; files?: Record<string, string>; fetch_files?: string[] }
  ): Promise<ExecResult>
  /** Closes the session; never rejects for a session already gone. */
  close(sessionId: string): Promise<void>
}

/** What a compatible API runs through: the gateway's router and sessions. */
export interface CompatPath {
  execute: ExecuteFn
  executeBatch: ExecuteBatchFn
  /** Sessions as a caller sees them (bound to its API key's digest, `callerKey`; '' for none). */
  sessionsFor: (key: string) => CompatSessions
  judge: JudgeFn
  judgeBatch: JudgeBatchFn
  /** The languages the fleet judges now, with their versions (asked of the runners at most every 30 s). */
  judgedLanguages: () => Promise<JudgedLanguages>
}

/**
 * The compatible APIs' path through the gateway's router and sessions. A compatible API's call
 * may be made long after its request came (a code-judge long batch's chunks and tries again), so
 * each waits for a sandbox the gateway's `queueTimeoutMs` from when it is made, as a call of its
 * own: the request's context with that deadline.
 */
export function compatPath({
  router,
  sessions,
  config,
  runners
}: Pick<ApiContext, 'router' | 'sessions' | 'config' | 'runners'>): CompatPath {
  const sent = (context: CallContext): CallContext => withDeadline(context, performance.now() + config.queueTimeoutMs)
  return {
    execute: async (request, context) => await router.execute(request, sent(context)),
    executeBatch: async (requests, context) => await router.executeBatch(requests, sent(context)),
    judge: async (request, context) => await router.judge(request, sent(context)),
    judgeBatch: async (requests, context) => await router.judgeBatch(requests, sent(context)),
    judgedLanguages: judgedLanguages(runners),
    sessionsFor: (key) => ({
      create: async (options) => (await sessions.create(options, key)).session_id,
      execute: async (id, cell) => await sessions.execute(id, cell, key),
      close: async (id) => {
        await sessions.close(id, key).catch(() => {})
      }
    })
  }
}

const known: ReadonlySet<string> = new Set(STATUSES)

/**
 * Turns an exception thrown by the execution path into a result, so a compat API can answer in
 * its own shape. An error that carries a protocol `status` (a gateway error) or the fleet's
 * ErrorBody (a runner's refusal) keeps it; anything else is the fleet's fault: `infra_error`,
 * never a user status.
 */
export function resultOfThrown(err: unknown): ExecResult {
  const e = err as
    | {
        status?: unknown
        code?: unknown
        message?: unknown
        body?: { status?: unknown; error?: { code?: unknown; message?: unknown } }
      }
    | undefined
  // A refusal carrying the fleet's ErrorBody (a session closed or lost, a bad cell) keeps its status and code.
  const body = typeof e?.body?.error === 'object' && e.body.error !== null ? e.body : undefined
  const claimed = body?.status ?? e?.status
  const status: Status = typeof claimed === 'string' && known.has(claimed) ? (claimed as Status) : 'infra_error'
  const safe: Status =
    status === 'ok' || status === 'error' || status === 'timeout' || status === 'memory' || status === 'killed'
      ? 'infra_error'
      : status
  const code = body?.error?.code ?? e?.code
  const message = body?.error?.message ?? e?.message
  return failedResult(
    safe,
    typeof code === 'string' ? code : 'SF_ERR_GATEWAY_INTERNAL',
    typeof message === 'string' ? message : String(err)
  )
}

/** Runs a judge `fn` and turns a rejection into the fleet's verdict (as {@link resultOfThrown} does an execute's). */
export async function settleJudge(fn: () => Promise<JudgeResult>, language: string): Promise<JudgeResult> {
  try {
    return await fn()
  } catch (err) {
    const r = resultOfThrown(err)
    return failedJudgeResult(
      r.status as JudgeVerdict,
      language,
      r.error?.type ?? 'SF_ERR_GATEWAY_INTERNAL',
      r.error?.message ?? ''
    )
  }
}

/** Runs `fn` and turns a rejection into a result (see {@link resultOfThrown}). */
export async function settle(fn: () => Promise<ExecResult>): Promise<ExecResult> {
  try {
    return await fn()
  } catch (err) {
    return resultOfThrown(err)
  }
}

/** The note added to a compat answer's stderr when the fleet cut an output at its cap. */
export function truncationNote(result: Pick<ExecResult, 'truncated'>): string {
  const cut = [result.truncated.stdout ? 'stdout' : '', result.truncated.stderr ? 'stderr' : ''].filter(Boolean)
  return cut.length === 0 ? '' : `\n[sandfleet: ${cut.join(' and ')} truncated at the output cap]\n`
}
