/**
 * A runner client that answers at once without running anything (every call `ok`, its code
 * echoed in stdout): for gateway tests about requests, not about sandboxes.
 */
import { RunnerRefusal, type RunnerClient, type RunnerSessions } from '@sandfleet/gateway'
import {
  encodeSessionId,
  failedJudgeResult,
  failedResult,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type RunnerApi,
  type RunnerInfo,
  type RunnerLoad,
  type SessionInfo
} from '@sandfleet/protocol'

/**
 * A fake runner's judge: every judge answered `infra_error` (SF_ERR_TEST_NO_JUDGE), for gateway tests that judge
 * nothing.
 */
export function notJudging(name: string): Pick<RunnerApi, 'judge' | 'judgeBatch'> {
  const answer = (r: JudgeRequest): JudgeResult =>
    failedJudgeResult(
      'infra_error',
      r.language ?? 'python',
      'SF_ERR_TEST_NO_JUDGE',
      'this fake runner judges nothing',
      {
        runner: name
      }
    )
  return {
    async judge(r) {
      return answer(r)
    },
    async judgeBatch(rs, on) {
      const out = rs.map(answer)
      out.forEach((r, i) => on?.(i, r))
      return out
    }
  }
}

/**
 * A fake runner's judge that answers each judge with `judge` (a scripted verdict, or the tests' local judge), stamped
 * with the runner's name; a batch answers as each finishes.
 */
export function judgingWith(
  name: string,
  judge: (r: JudgeRequest) => Promise<JudgeResult>
): Pick<RunnerApi, 'judge' | 'judgeBatch'> & { judged: JudgeRequest[] } {
  const judged: JudgeRequest[] = []
  const one = async (r: JudgeRequest): Promise<JudgeResult> => {
    judged.push(r)
    return { ...(await judge(r)), runner: name }
  }
  return {
    judged,
    judge: one,
    async judgeBatch(rs, on) {
      return await Promise.all(
        rs.map(async (r, i) => {
          const result = await one(r)
          on?.(i, result)
          return result
        })
      )
    }
  }
}

/** In-memory sessions (each cell echoed like a job), refusing an unknown id or another key's as the runner does. */
function echoSessions(name: string, answer: (r: ExecRequest) => ExecResult): RunnerSessions {
  const open = new Map<string, { info: SessionInfo; key: string }>()
  let seq = 0
  const find = (id: string, key: string): SessionInfo => {
    const s = open.get(id)
    if (s === undefined || s.key !== key)
      throw new RunnerRefusal(404, {
        status: 'invalid_request',
        error: { code: 'SF_ERR_SESSION_NOT_FOUND', message: `no session ${id}` }
      })
    return s.info
  }
  return {
    async create(request, key) {
      const now = new Date().toISOString()
      const info: SessionInfo = {
        session_id: encodeSessionId(name, `s${++seq}`),
        language: request.language ?? 'python',
        runner: name,
        ttl_s: request.ttl_s ?? 600,
        memory_mb: request.memory_mb ?? 512,
        created_at: now,
        last_used_at: now,
        expires_at: now,
        cells: 0
      }
      open.set(info.session_id, { info, key })
      return info
    },
    async get(id, key) {
      return find(id, key)
    },
    async execute(id, request, key) {
      find(id, key).cells++
      return answer({ code: request.code })
    },
    async close(id, key) {
      find(id, key)
      open.delete(id)
    }
  }
}

/** The info (`GET /v1/info`) of a fake runner with `load`: no isolation, no manifest. */
export function fakeInfo(load: RunnerLoad): RunnerInfo {
  return {
    runner: load.runner,
    state: load.state,
    backend: load.backend,
    backend_reason: 'a fake runner of the tests',
    languages: load.languages,
    pool_size: load.capacity,
    isolation: {},
    environments: {},
    manifest: null
  }
}

/** The fake runner; `calls` counts the jobs it was given. */
export function echoRunner(name = 'echo'): RunnerClient & { calls: number } {
  const load: RunnerLoad = {
    runner: name,
    state: 'ready',
    backend: 'process',
    languages: ['python', 'javascript'],
    capacity: 64,
    in_flight: 0,
    queued: 0,
    queue_limit: 1024,
    warm: 64,
    busy: 0,
    sessions: 0
  }
  const answer = (r: ExecRequest): ExecResult => ({
    ...failedResult('ok', '', ''),
    error: null,
    exit_code: 0,
    stdout: r.code,
    runner: name,
    sandbox: `${name}-0`
  })
  const client = {
    name,
    calls: 0,
    async execute(r: ExecRequest) {
      client.calls++
      return answer(r)
    },
    async executeBatch(rs: ExecRequest[], on?: (i: number, r: ExecResult) => void) {
      client.calls += rs.length
      const out = rs.map(answer)
      out.forEach((r, i) => on?.(i, r))
      return out
    },
    async load() {
      return load
    },
    async info() {
      return fakeInfo(load)
    },
    ...notJudging(name),
    sessions: echoSessions(name, answer),
    async close() {}
  }
  return client
}
