/**
 * A judge call as the runner takes it, decided once: checked against the runner's limits and the contract
 * (`judge-check.ts`), its defaults resolved (`resolveJudgeRequest`), its language held to those the runner judges; or
 * refused with the reason. Nothing after this checks or defaults the request again.
 */
import {
  resolveJudgeRequest,
  type CallContext,
  type JudgeRequest,
  type ResolvedJudgeRequest
} from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { RunnerConfig } from '../config.ts'
import type { RequestProblem } from '../requests/request-check.ts'
import { startDeadline } from '../requests/prepared-call.ts'
import { checkJudgeRequest } from './judge-check.ts'

/** What every prepared judge holds: its caller's label, its context and its deadline for waiting. */
interface Prepared {
  readonly requestId: string | undefined
  readonly context: CallContext
  /** The latest moment its job may start (its context's deadline, capped by the runner's `queueTimeoutMs`). */
  readonly startBy: number
}

/** A judge call checked and resolved, in its context: the judge, or why it is refused (never both). Frozen. */
export type PreparedJudge =
  | (Prepared & { readonly judge: ResolvedJudgeRequest; readonly problem: undefined })
  | (Prepared & { readonly judge: undefined; readonly problem: RequestProblem })

/**
 * Prepares `request` in `context` under `config`; `judged` says whether the runner judges a language (by its name),
 * and which it judges (for the refusal's message).
 */
export function prepareJudge(
  request: JudgeRequest,
  context: CallContext,
  config: Pick<
    RunnerConfig,
    'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb' | 'isolation' | 'allowReuse' | 'queueTimeoutMs'
  >,
  judged: ReadonlySet<string>,
  now = performance.now()
): PreparedJudge {
  const prepared: Prepared = {
    requestId: typeof request.request_id === 'string' ? request.request_id : undefined,
    context,
    startBy: startDeadline(context, config, now)
  }
  const refused = (problem: RequestProblem): PreparedJudge => Object.freeze({ ...prepared, judge: undefined, problem })
  const problem = checkJudgeRequest(request, config)
  if (problem !== undefined) return refused(problem)
  try {
    const resolved = resolveJudgeRequest(request, { isolation: config.isolation })
    // allowReuse false keeps every job at fork, whatever it asks
    const judge = config.allowReuse ? resolved : { ...resolved, isolation: 'fork' as const }
    const languages: Array<[string, string]> = [[judge.language, 'language']]
    if (judge.compare.kind === 'checker') languages.push([judge.compare.language, 'compare/checker/language'])
    for (const [language, field] of languages) {
      if (!judged.has(language))
        return refused({
          code: 'SF_ERR_RUNNER_LANGUAGE',
          field,
          message:
            judged.size === 0
              ? `this runner judges no language`
              : `this runner does not judge ${language} (it judges ${[...judged].join(', ')})`
        })
    }
    return Object.freeze({ ...prepared, judge, problem: undefined })
  } catch (err) {
    return refused({ code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: '', message: messageOf(err) })
  }
}
