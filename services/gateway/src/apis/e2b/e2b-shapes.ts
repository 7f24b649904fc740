/**
 * E2B's shapes: a sandfleet sandbox as E2B's API describes a sandbox (`Sandbox`, `ListedSandbox`, `SandboxDetail`),
 * the templates sandfleet answers to, and the refusals of the fleet as E2B answers them: on the API URL its error
 * body `{code, message}`, on the sandbox URL what its proxy answers for a sandbox that is gone (HTTP 502).
 */
import { SANDBOX_TOKEN, SESSION_LOST, SESSION_NOT_FOUND, type SandboxInfo } from '@sandfleet/protocol'
import { RunnerRefusal } from '../../errors.ts'

/** The templates sandfleet makes sandboxes of: each one its Python sandbox. */
export const E2B_TEMPLATES: readonly string[] = Object.freeze(['code-interpreter-v1', 'base'])

/**
 * The envd version sandfleet's sandboxes say they run: what the SDK checks its calls against (0.5.7: files written
 * as multipart or octet-stream, stdin closed; below 0.6.2: no file metadata).
 */
export const ENVD_VERSION = '0.5.7'

/** The ports of the sandbox URL: the code interpreter's and envd's (files, processes). */
export const INTERPRETER_PORT = '49999'
export const ENVD_PORT = '49983'

/** E2B's API error body. */
export interface E2bError {
  code: number
  message: string
}

/** The API's answer to a create or a connect: the sandbox and the token its sandbox URL takes. */
export function sandboxCreated(info: SandboxInfo): Record<string, unknown> {
  return {
    templateID: info.template,
    sandboxID: info.sandbox_id,
    alias: info.template,
    clientID: info.runner,
    envdVersion: ENVD_VERSION,
    envdAccessToken: info.token ?? null,
    trafficAccessToken: null,
    domain: null
  }
}

/** The API's listed sandbox. */
export function sandboxListed(info: SandboxInfo): Record<string, unknown> {
  return {
    templateID: info.template,
    alias: info.template,
    sandboxID: info.sandbox_id,
    clientID: info.runner,
    startedAt: info.started_at,
    endAt: info.end_at,
    cpuCount: 1,
    memoryMB: info.memory_mb,
    diskSizeMB: 0,
    metadata: info.labels,
    state: 'running',
    envdVersion: ENVD_VERSION,
    volumeMounts: []
  }
}

/** The API's sandbox detail (`GET /sandboxes/{id}`). */
export function sandboxDetail(info: SandboxInfo): Record<string, unknown> {
  return {
    ...sandboxListed(info),
    envdAccessToken: info.token ?? null,
    domain: null,
    allowInternetAccess: false,
    lifecycle: { autoResume: false, onTimeout: 'kill' }
  }
}

/** The number a refusal of the runner's limit names ("its maximum of 100 sessions"), when it names one. */
function limitOf(message: string): string {
  const n = /maximum of (\d+)/.exec(message)?.[1]
  return n === undefined ? '' : ` (${n})`
}

/**
 * A refusal of the fleet as the API URL answers it: a sandbox not found, another key's, or lost with its runner is
 * E2B's 404 for a sandbox that does not exist; a runner or key at its limit of sandboxes is E2B's 429 for a full
 * account; the rest keep their status.
 */
export function apiRefusal(err: RunnerRefusal, id?: string): { statusCode: number; body: E2bError } {
  const gone = `sandbox ${id === undefined ? '' : `"${id}" `}not found (it timed out, was killed, or its runner is gone)`
  if (err.code === SESSION_NOT_FOUND || err.code === SESSION_LOST || err.code === SANDBOX_TOKEN)
    return { statusCode: 404, body: { code: 404, message: gone } }
  if (err.code === 'SF_ERR_SESSION_LIMIT')
    return {
      statusCode: 429,
      body: {
        code: 429,
        message: `you have reached the maximum number of concurrent E2B sandboxes${limitOf(err.message)} on this sandfleet fleet: kill a sandbox, or wait for one to time out, and retry`
      }
    }
  return { statusCode: err.statusCode, body: { code: err.statusCode, message: err.message } }
}

/** The sandbox URL's answer for a sandbox that is gone (E2B's proxy: 502 naming the sandbox). */
export function sandboxGone(id: string): { sandboxId: string; message: string; code: number } {
  return {
    sandboxId: id,
    message: 'the sandbox was not found: it timed out, was killed, or its runner is gone',
    code: 502
  }
}

/** Whether a refusal means the sandbox is gone (not found, or lost with its process or runner). */
export function isGone(err: unknown): boolean {
  return err instanceof RunnerRefusal && (err.code === SESSION_NOT_FOUND || err.code === SESSION_LOST)
}

/** Whether a refusal is a wrong or missing access token. */
export function isUnauthorized(err: unknown): boolean {
  return err instanceof RunnerRefusal && err.code === SANDBOX_TOKEN
}
