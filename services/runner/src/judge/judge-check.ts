/**
 * The runner's own limits on a judge request, checked before it is queued, and the contract's checks beyond its schema
 * (`judgeRequestProblem`): the code and a checker's code within `maxCodeBytes`, each time limit within `maxTimeoutMs`,
 * `memory_mb` within `maxMemoryMb`; the tests in one form. The shape of the request is the schema's, checked by
 * whoever parsed it (the HTTP app, the gateway).
 */
import { judgeRequestProblem, type JudgeRequest } from '@sandfleet/protocol'
import type { RunnerConfig } from '../config.ts'
import type { RequestProblem } from '../requests/request-check.ts'

type Limits = Pick<RunnerConfig, 'maxCodeBytes' | 'maxTimeoutMs' | 'maxMemoryMb'>

/** The refusal of code over `maxCodeBytes` at `field`, or undefined. */
function codeProblem(code: string, field: string, c: Limits): RequestProblem | undefined {
  if (code.length <= c.maxCodeBytes || Buffer.byteLength(code) <= c.maxCodeBytes) return undefined
  return {
    code: 'SF_ERR_RUNNER_LIMIT',
    field,
    message: `${field} is ${Buffer.byteLength(code)} bytes, over this runner's limit of ${c.maxCodeBytes} bytes (maxCodeBytes, --max-code-bytes)`
  }
}

/** The first reason to refuse `request` under `config` (limits and the contract), or undefined. */
export function checkJudgeRequest(request: JudgeRequest, config: Limits): RequestProblem | undefined {
  if (typeof request.code !== 'string')
    return { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: 'code', message: 'code must be a string' }
  const tooLong = codeProblem(request.code, 'code', config)
  if (tooLong !== undefined) return tooLong
  const compare = request.compare
  if (typeof compare === 'object' && 'checker' in compare) {
    const checker = codeProblem(compare.checker.code, 'compare/checker/code', config)
    if (checker !== undefined) return checker
  }
  for (const field of ['timeout_ms', 'compile_timeout_ms'] as const) {
    const value = request[field]
    if (value !== undefined && value > config.maxTimeoutMs)
      return {
        code: 'SF_ERR_RUNNER_LIMIT',
        field,
        message: `${field} ${value} is over this runner's limit of ${config.maxTimeoutMs}`
      }
  }
  if (request.memory_mb !== undefined && request.memory_mb > config.maxMemoryMb)
    return {
      code: 'SF_ERR_RUNNER_LIMIT',
      field: 'memory_mb',
      message: `memory_mb ${request.memory_mb} is over this runner's limit of ${config.maxMemoryMb}`
    }
  const problem = judgeRequestProblem(request)
  return problem === undefined ? undefined : { code: 'SF_ERR_RUNNER_INVALID_REQUEST', ...problem }
}
