/**
 * A judge call as the runner takes it, decided once: checked against the runner's limits and the contract
 * (`judge-check.ts`), its defaults resolved (`resolveJudgeRequest`), its language held to those the runner judges; or
 * refused with the reason. Nothing after this checks or defaults the request again.
 */
import { resolveJudgeRequest, type JudgeRequest, type ResolvedJudgeRequest } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { RunnerConfig } from '../config.ts'
import type { RequestProblem } from '../requests/request-check.ts'
import { checkJudgeRequest } from './judge-check.ts'

/** A judge call checked and resolved: the judge, or why it is refused (never both). */
export type PreparedJudge =
  | { readonly judge: ResolvedJudgeRequest; readonly problem: undefined; readonly requestId: string | undefined }
  | { readonly judge: undefined; readonly problem: RequestProblem; readonly requestId: string | undefined }

/**
 * Prepares `request` under `config`; `judged` says whether the runner judges a language (by its name), and which it
 * judges (for the refusal's message).
 */
export function prepareJudge(
  request: JudgeRequest,
  config: Pick<RunnerConfig, 'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb' | 'isolation' | 'allowReuse'>,
  judged: ReadonlySet<string>
): PreparedJudge {
  const requestId = typeof request.request_id === 'string' ? request.request_id : undefined
  const problem = checkJudgeRequest(request, config)
  if (problem !== undefined) return { judge: undefined, problem, requestId }
  try {
    const resolved = resolveJudgeRequest(request, { isolation: config.isolation })
    // allowReuse false keeps every job at fork, whatever it asks
    const judge = config.allowReuse ? resolved : { ...resolved, isolation: 'fork' as const }
    const languages: Array<[string, string]> = [[judge.language, 'language']]
    if (judge.compare.kind === 'checker') languages.push([judge.compare.language, 'compare/checker/language'])
    for (const [language, field] of languages) {
      if (!judged.has(language))
        return {
          judge: undefined,
          problem: {
            code: 'SF_ERR_RUNNER_LANGUAGE',
            field,
            message:
              judged.size === 0
                ? `this runner judges no language`
                : `this runner does not judge ${language} (it judges ${[...judged].join(', ')})`
          },
          requestId
        }
    }
    return { judge, problem: undefined, requestId }
  } catch (err) {
    return {
      judge: undefined,
      problem: { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: '', message: messageOf(err) },
      requestId
    }
  }
}
