/**
 * The runner's own limits on a request, checked before it is queued: a field over the configured
 * limits, a field the sandbox could not decode (a `files` value that is not base64, a path that
 * names no writable place: the protocol's `fileFieldsProblem`), or a language the runner does not
 * serve. The shape of a request (types, the contract's bounds) is the schema's, checked by whoever
 * parsed it (the HTTP app, the gateway).
 */
import { fileFieldsProblem, type ExecRequest, type Language } from '@sandfleet/protocol'
import type { RunnerConfig } from '../config.ts'
import type { RunnerErrorCode } from '../errors.ts'

/** A request the runner refuses before queueing: what the HTTP app turns into a 400. */
export interface RequestProblem {
  code: RunnerErrorCode
  message: string
  /** The field at fault (`timeout_ms`, `code`, `language`, `files/a.txt`). */
  field: string
}

/**
 * The first reason to refuse `request` under `config`, or `undefined`. `served`: the pools by language (empty before
 * start: any language passes).
 */
export function checkRequest(
  request: ExecRequest,
  config: RunnerConfig,
  served: ReadonlyMap<Language, unknown>
): RequestProblem | undefined {
  const c = config
  if (typeof request.code !== 'string')
    return { code: 'SF_ERR_RUNNER_INVALID_REQUEST', field: 'code', message: 'code must be a string' }
  if (request.code.length > c.maxCodeBytes && Buffer.byteLength(request.code) > c.maxCodeBytes) {
    return {
      code: 'SF_ERR_RUNNER_LIMIT',
      field: 'code',
      message: `code is ${Buffer.byteLength(request.code)} bytes, over this runner's limit of ${c.maxCodeBytes} bytes (maxCodeBytes, --max-code-bytes)`
    }
  }
  if (request.timeout_ms !== undefined && request.timeout_ms > c.maxTimeoutMs) {
    return {
      code: 'SF_ERR_RUNNER_LIMIT',
      field: 'timeout_ms',
      message: `timeout_ms ${request.timeout_ms} is over this runner's limit of ${c.maxTimeoutMs}`
    }
  }
  if (request.memory_mb !== undefined && request.memory_mb > c.maxMemoryMb) {
    return {
      code: 'SF_ERR_RUNNER_LIMIT',
      field: 'memory_mb',
      message: `memory_mb ${request.memory_mb} is over this runner's limit of ${c.maxMemoryMb}`
    }
  }
  const undecodable = fileFieldsProblem(request)
  if (undecodable !== undefined) return { code: 'SF_ERR_RUNNER_INVALID_REQUEST', ...undecodable }
  const language = request.language ?? 'python'
  return served.size > 0 && !served.has(language) ? languageProblem(language, served) : undefined
}

/** The refusal of a language the runner does not serve. */
export function languageProblem(language: Language, served: ReadonlyMap<Language, unknown>): RequestProblem {
  return {
    code: 'SF_ERR_RUNNER_LANGUAGE',
    field: 'language',
    message: `this runner does not serve ${language} (it serves ${[...served.keys()].join(', ')})`
  }
}
