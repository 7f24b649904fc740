/**
 * The APIs a product run can aim at, so the same calls run against any of them side by side:
 * sandfleet's `/v1/execute` (one call a request), `/v1/execute/batch` as JSON or as an NDJSON
 * stream, SandboxFusion's `/run_code`, code-judge's `/run/long-batch`. Each target builds the
 * request for a group of calls and turns its response back into one answer per result, in
 * sandfleet's status vocabulary. Every call carries a nonce where the API echoes one
 * (`request_id`, code-judge's `sub_id`), so an answer is matched to its own call, not to a
 * position; SandboxFusion echoes none: there the HTTP exchange is the identity.
 */
import type { BenchCall } from '../workloads/calls.ts'

/** A call of a run with its nonce. */
export interface TaggedCall {
  call: BenchCall
  nonce: string
}

/** One result in a response: the nonce it carries (when the API echoes one), its position, status and stdout. */
export interface Answer {
  nonce?: string
  position: number
  status: string
  stdout: string
  /** The job's own CPU the fleet reported (`cpu_ms`), when the API carries it. */
  cpuMs?: number
}

/** A response read: the answers in it, or why the whole request failed (`http_429`, `bad_response`). */
export type Reading = { answers: Answer[] } | { failed: string }

/** A target API. */
export interface Target {
  name: TargetName
  path: string
  /** Whether one request carries many calls. */
  batched: boolean
  /** Whether the answers carry the calls' nonces. */
  echoesNonce: boolean
  accept?: string
  body: (calls: readonly TaggedCall[]) => string
  read: (statusCode: number, body: string) => Reading
  /**
   * For a streamed response (NDJSON): one line → its answer (undefined: not a line of the stream), read as each
   * arrives.
   */
  line?: (line: string) => Answer | undefined
}

/** The targets' names. */
export const TARGETS = ['single', 'batch', 'ndjson', 'run-code', 'long-batch'] as const
/** A target's name. */
export type TargetName = (typeof TARGETS)[number]

function parse(text: string): any {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function execRequest({ call, nonce }: TaggedCall): Record<string, unknown> {
  return {
    code: call.code,
    request_id: nonce,
    ...(call.stdin === undefined ? {} : { stdin: call.stdin }),
    ...(call.timeoutMs === undefined ? {} : { timeout_ms: call.timeoutMs })
  }
}

function nativeAnswer(r: any, position: number): Answer {
  if (typeof r?.status !== 'string') return { position, status: 'bad_response', stdout: '' }
  const answer: Answer = { position, status: r.status, stdout: typeof r.stdout === 'string' ? r.stdout : '' }
  if (typeof r.request_id === 'string') answer.nonce = r.request_id
  if (typeof r.cpu_ms === 'number') answer.cpuMs = r.cpu_ms
  return answer
}

/**
 * An HTTP error names the call's outcome, unless its JSON body carries a sandfleet status (a 429 says `overloaded`).
 */
function httpFailure(statusCode: number): Reading {
  return { failed: `http_${statusCode}` }
}

const single: Target = {
  name: 'single',
  path: '/v1/execute',
  batched: false,
  echoesNonce: true,
  body: ([c]) => JSON.stringify(execRequest(c)),
  read: (statusCode, body) =>
    statusCode === 200 ? { answers: [nativeAnswer(parse(body), 0)] } : httpFailure(statusCode)
}

const batch: Target = {
  name: 'batch',
  path: '/v1/execute/batch',
  batched: true,
  echoesNonce: true,
  body: (calls) => JSON.stringify({ requests: calls.map(execRequest) }),
  read: (statusCode, body) => {
    if (statusCode !== 200) return httpFailure(statusCode)
    const results = parse(body)?.results
    if (!Array.isArray(results)) return { failed: 'bad_response' }
    return { answers: results.map(nativeAnswer) }
  }
}

function ndjsonLine(line: string): Answer | undefined {
  const item = parse(line)
  return Number.isInteger(item?.index) ? nativeAnswer(item.result, item.index) : undefined
}

const ndjson: Target = {
  ...batch,
  name: 'ndjson',
  accept: 'application/x-ndjson',
  line: ndjsonLine,
  read: (statusCode, body) => {
    if (statusCode !== 200) return httpFailure(statusCode)
    const answers: Answer[] = []
    for (const line of body.split('\n')) {
      if (line === '') continue
      const answer = ndjsonLine(line)
      if (answer === undefined) return { failed: 'bad_response' }
      answers.push(answer)
    }
    return { answers }
  }
}

/** SandboxFusion's answer in sandfleet's statuses (the table in sandbox-fusion-map.ts, read backwards). */
function runCodeStatus(r: any): string {
  if (r?.status === 'Success') return 'ok'
  if (r?.status === 'SandboxError') return 'sandbox_error'
  if (r?.status !== 'Failed') return 'bad_response'
  return r.run_result?.status === 'TimeLimitExceeded' ? 'timeout' : 'error'
}

const runCode: Target = {
  name: 'run-code',
  path: '/run_code',
  batched: false,
  echoesNonce: false,
  body: ([{ call }]) =>
    JSON.stringify({
      code: call.code,
      language: 'python',
      ...(call.stdin === undefined ? {} : { stdin: call.stdin }),
      ...(call.timeoutMs === undefined ? {} : { run_timeout: call.timeoutMs / 1000 })
    }),
  read: (statusCode, body) => {
    if (statusCode !== 200) return httpFailure(statusCode)
    const r = parse(body)
    return {
      answers: [
        {
          position: 0,
          status: runCodeStatus(r),
          stdout: typeof r?.run_result?.stdout === 'string' ? r.run_result.stdout : ''
        }
      ]
    }
  }
}

/** code-judge's answer in sandfleet's statuses (code-judge-map.ts's table, read backwards). */
function judgeStatus(r: any): string {
  if (r?.run_success === true) return 'ok'
  switch (r?.reason) {
    case '':
      return 'error'
    case 'worker_timeout':
      return 'timeout'
    case 'queue_timeout':
      return 'queue_timeout'
    case 'internal_error':
      return 'infra_error'
    case 'invalid_input':
      return 'invalid_request'
    default:
      return 'bad_response'
  }
}

const longBatch: Target = {
  name: 'long-batch',
  path: '/run/long-batch',
  batched: true,
  echoesNonce: true,
  body: (calls) =>
    JSON.stringify({
      type: 'batch',
      submissions: calls.map(({ call, nonce }) => ({
        type: 'python',
        solution: call.code,
        input: call.stdin ?? '',
        sub_id: nonce
      }))
    }),
  read: (statusCode, body) => {
    if (statusCode !== 200) return httpFailure(statusCode)
    const results = parse(body)?.results
    if (!Array.isArray(results)) return { failed: 'bad_response' }
    return {
      answers: results.map((r: any, position: number) => ({
        position,
        status: judgeStatus(r),
        stdout: typeof r?.stdout === 'string' ? r.stdout : '',
        ...(typeof r?.sub_id === 'string' ? { nonce: r.sub_id } : {})
      }))
    }
  }
}

/** Every target by name. */
export const TARGET_TABLE: Readonly<Record<TargetName, Target>> = {
  single,
  batch,
  ndjson,
  'run-code': runCode,
  'long-batch': longBatch
}
