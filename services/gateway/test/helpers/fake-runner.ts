/**
 * A runner client that answers at once without running anything (every call `ok`, its code
 * echoed in stdout): for gateway tests about requests, not about sandboxes.
 */
import type { RunnerClient } from '@sandfleet/gateway'
import { failedResult, type ExecRequest, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'

/** The fake runner; `calls` counts the jobs it was given. */
export function echoRunner (name = 'echo'): RunnerClient & { calls: number } {
  const load: RunnerLoad = { runner: name, state: 'ready', backend: 'process', languages: ['python', 'javascript'], capacity: 64, in_flight: 0, queued: 0, queue_limit: 1024, warm: 64, busy: 0, sessions: 0 }
  const answer = (r: ExecRequest): ExecResult => ({ ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout: r.code, runner: name, sandbox: `${name}-0` })
  const client = {
    name,
    calls: 0,
    async execute (r: ExecRequest) { client.calls++; return answer(r) },
    async executeBatch (rs: ExecRequest[], on?: (i: number, r: ExecResult) => void) {
      client.calls += rs.length
      const out = rs.map(answer)
      out.forEach((r, i) => on?.(i, r))
      return out
    },
    async load () { return load },
    async close () {}
  }
  return client
}
