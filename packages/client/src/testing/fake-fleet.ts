/**
 * A stand-in fleet for tests of code that uses the client (trainers, agents) when no real fleet
 * runs: real HTTP (node:http on 127.0.0.1) implementing the public API — `/v1/execute`,
 * `/v1/execute/batch` (JSON or NDJSON), sessions with 410, `/v1/judge` and `/v1/judge/batch` — and
 * a {@link FakeBehavior} that decides each answer (a {@link FakeJudgeBehavior} each judge's).
 * {@link pythonBehavior} runs the code with the host's python3, unsandboxed: for tests only,
 * never for untrusted code.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { spawn } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import {
  GATEWAY_HEADERS,
  JUDGE_VERDICTS,
  failedJudgeResult,
  failedResult,
  timeoutMsOf,
  type ExecRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeVerdict
} from '@sandfleet/protocol'
import { pythonJudge, type FakeJudgeBehavior } from './fake-judge.ts'
import { errorReply, type FakeHttpReply } from './fake-reply.ts'

/** An item of a batch the behavior answered with an HTTP error: refused before it ran. */
function refusedItem(reply: FakeHttpReply): ExecResult {
  const status = typeof reply.body === 'string' ? 'infra_error' : reply.body.status
  const result = failedResult(status, 'SF_ERR_FAKE_HTTP', `HTTP ${reply.http}`)
  if (status === 'overloaded' || status === 'queue_timeout' || status === 'infra_error') result.maybe_ran = false
  return result
}

/** A judge of a batch the behavior answered with an HTTP error: refused before it ran, as {@link refusedItem}. */
function refusedJudge(reply: FakeHttpReply, language: string): JudgeResult {
  const status = typeof reply.body === 'string' ? 'infra_error' : reply.body.status
  const verdict = isJudgeVerdict(status) ? status : 'infra_error'
  const result = failedJudgeResult(verdict, language, 'SF_ERR_FAKE_HTTP', `HTTP ${reply.http}`)
  if (verdict === 'overloaded' || verdict === 'queue_timeout' || verdict === 'infra_error') result.maybe_ran = false
  return result
}

export { errorReply, type FakeHttpReply }

/** Context of one call handed to a {@link FakeBehavior}. */
export interface FakeCallContext {
  /** How many times a request with this `request_id` (or this code) has been seen, this one included. */
  attempt: number
  /** Set for calls inside a session. */
  sessionId?: string
  /** Code run earlier in this session, successful calls only, in order. */
  history: string[]
  /** `single`, `batch` or `session`. */
  route: 'single' | 'batch' | 'session'
}

/** Decides the answer to one call: a result, or an HTTP error reply. */
export type FakeBehavior = (
  req: ExecRequest,
  ctx: FakeCallContext
) => ExecResult | FakeHttpReply | Promise<ExecResult | FakeHttpReply>

/** One request the fake fleet received. */
export interface FakeLogEntry {
  method: string
  path: string
  items: number
  accept: string
  /** The runner a retry named (`x-sandfleet-runner`), when it named one. */
  runner?: string
}

/** A running fake fleet. */
export interface FakeFleet {
  /** `http://127.0.0.1:<port>`. */
  url: string
  /** Every HTTP request received, in order. */
  log: FakeLogEntry[]
  /** Session ids alive now. */
  sessions: () => string[]
  /** Forgets a session as a crashed runner would: its next call gets 410. */
  loseSession: (id: string) => void
  /** Stops listening and drops connections. */
  close: () => Promise<void>
}

/** Runs the code with python3 (unsandboxed; tests only); a session replays its history silently first. */
export const pythonBehavior: FakeBehavior = async (req, ctx) => {
  const timeoutMs = timeoutMsOf(req)
  const prelude =
    ctx.history.length === 0
      ? ''
      : 'import sys as _s, io as _io\n_o = _s.stdout\n_s.stdout = _io.StringIO()\n' +
        ctx.history.map((c) => `exec(compile(${JSON.stringify(c)}, '<cell>', 'exec'))\n`).join('') +
        '_s.stdout = _o\n'
  const started = Date.now()
  return await new Promise<ExecResult>((resolve) => {
    const child = spawn(
      'python3',
      ['-I', '-c', prelude + `exec(compile(${JSON.stringify(req.code)}, '<code>', 'exec'))`],
      { stdio: ['pipe', 'pipe', 'pipe'] }
    )
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      const base = {
        stdout,
        stderr,
        duration_ms: Date.now() - started,
        queue_ms: 0,
        truncated: { stdout: false, stderr: false },
        files: {},
        runner: 'fake',
        sandbox: 'fake-0',
        ...(req.request_id ? { request_id: req.request_id } : {})
      }
      if (timedOut) {
        resolve({
          ...base,
          status: 'timeout',
          exit_code: null,
          error: { type: 'Timeout', message: `exceeded ${timeoutMs} ms` }
        })
        return
      }
      if (code === 0) {
        resolve({ ...base, status: 'ok', exit_code: 0, error: null })
        return
      }
      const lastLine = stderr.trim().split('\n').pop() ?? ''
      const m = /^(\w+(?:\.\w+)*):?\s*(.*)$/.exec(lastLine)
      resolve({
        ...base,
        status: 'error',
        exit_code: code,
        error: { type: m?.[1] ?? 'Error', message: m?.[2] ?? lastLine, traceback: stderr }
      })
    })
    child.stdin.end(req.stdin ?? '')
  })
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let text = ''
  for await (const chunk of req) text += chunk as string
  return text.length > 0 ? JSON.parse(text) : null
}

function send(res: ServerResponse, http: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  res.writeHead(http, { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json', ...headers })
  res.end(text)
}

function isHttpReply(r: ExecResult | JudgeResult | FakeHttpReply): r is FakeHttpReply {
  return typeof (r as FakeHttpReply).http === 'number'
}

const isJudgeVerdict = (status: string): status is JudgeVerdict =>
  (JUDGE_VERDICTS as readonly string[]).includes(status)

/** Options of {@link startFakeFleet}. */
export interface FakeFleetOptions {
  /** Decides each judge's answer (default: Python judged with the host's python3, one run a test). */
  judge?: FakeJudgeBehavior
}

/** Starts a fake fleet on 127.0.0.1 (a random port). */
export async function startFakeFleet(
  behavior: FakeBehavior = pythonBehavior,
  options: FakeFleetOptions = {}
): Promise<FakeFleet> {
  const judgeBehavior =
    options.judge ??
    pythonJudge(async (code, stdin, timeoutMs) => {
      const out = await pythonBehavior(
        { code, stdin, timeout_ms: timeoutMs },
        { attempt: 1, history: [], route: 'single' }
      )
      return out as ExecResult
    })
  const seen = new Map<string, number>()
  const sessions = new Map<string, string[]>()
  const log: FakeLogEntry[] = []
  let nextSession = 1

  async function run(
    req: ExecRequest,
    route: FakeCallContext['route'],
    sessionId?: string
  ): Promise<ExecResult | FakeHttpReply> {
    const key = req.request_id ?? req.code
    const attempt = (seen.get(key) ?? 0) + 1
    seen.set(key, attempt)
    const history = sessionId ? (sessions.get(sessionId) ?? []) : []
    try {
      const out = await behavior(req, { attempt, history, route, ...(sessionId ? { sessionId } : {}) })
      if (sessionId && !isHttpReply(out) && out.status === 'ok') history.push(req.code)
      return out
    } catch (err) {
      return failedResult('infra_error', 'SF_ERR_FAKE_BEHAVIOR', String(err))
    }
  }

  async function judge(req: JudgeRequest): Promise<JudgeResult | FakeHttpReply> {
    const key = req.request_id ?? req.code
    const attempt = (seen.get(key) ?? 0) + 1
    seen.set(key, attempt)
    try {
      return await judgeBehavior(req, { attempt })
    } catch (err) {
      return failedJudgeResult('infra_error', req.language ?? 'python', 'SF_ERR_FAKE_BEHAVIOR', String(err))
    }
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x')
      const body = req.method === 'POST' ? ((await readJson(req)) as Record<string, unknown> | null) : null
      const accept = String(req.headers.accept ?? '')
      const entry: FakeLogEntry = { method: req.method ?? '', path: url.pathname, items: 1, accept }
      const runner = req.headers[GATEWAY_HEADERS.runner]
      if (typeof runner === 'string') entry.runner = runner
      log.push(entry)
      if (req.method === 'POST' && url.pathname === '/v1/execute') {
        if (typeof body?.code !== 'string') {
          send(res, 400, errorReply(400, 'invalid_request', 'SF_ERR_FAKE_INVALID', 'code must be a string').body)
          return
        }
        const out = await run(body as unknown as ExecRequest, 'single')
        if (isHttpReply(out)) send(res, out.http, out.body, out.headers)
        else send(res, 200, out)
        return
      }
      if (req.method === 'POST' && url.pathname === '/v1/execute/batch') {
        const requests = body?.requests as ExecRequest[] | undefined
        if (!Array.isArray(requests) || requests.length === 0) {
          send(
            res,
            400,
            errorReply(400, 'invalid_request', 'SF_ERR_FAKE_INVALID', 'requests must be a non-empty array').body
          )
          return
        }
        entry.items = requests.length
        if (accept.includes('application/x-ndjson')) {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' })
          await Promise.all(
            requests.map(async (r, index) => {
              const out = await run(r, 'batch')
              const result = isHttpReply(out) ? refusedItem(out) : out
              res.write(JSON.stringify({ index, result }) + '\n')
            })
          )
          res.end()
          return
        }
        const outs = await Promise.all(requests.map(async (r) => await run(r, 'batch')))
        const reply = outs.find(isHttpReply)
        if (reply && outs.every(isHttpReply)) {
          send(res, reply.http, reply.body, reply.headers)
          return
        }
        send(res, 200, {
          results: outs.map((o) => (isHttpReply(o) ? refusedItem(o) : o))
        })
        return
      }
      if (req.method === 'POST' && url.pathname === '/v1/judge') {
        const out = await judge(body as unknown as JudgeRequest)
        if (isHttpReply(out)) send(res, out.http, out.body, out.headers)
        else send(res, 200, out)
        return
      }
      if (req.method === 'POST' && url.pathname === '/v1/judge/batch') {
        const requests = (body?.requests ?? []) as JudgeRequest[]
        entry.items = requests.length
        const outs = await Promise.all(requests.map(async (r) => await judge(r)))
        const reply = outs.find(isHttpReply)
        if (reply !== undefined && outs.every(isHttpReply)) {
          send(res, reply.http, reply.body, reply.headers)
          return
        }
        send(res, 200, {
          results: outs.map((o, i) => (isHttpReply(o) ? refusedJudge(o, requests[i]?.language ?? 'python') : o))
        })
        return
      }
      if (req.method === 'POST' && url.pathname === '/v1/sessions') {
        const id = `s-${nextSession++}`
        sessions.set(id, [])
        send(res, 201, { session_id: id })
        return
      }
      const m = /^\/v1\/sessions\/([^/]+)(\/execute)?$/.exec(url.pathname)
      if (m) {
        const id = decodeURIComponent(m[1])
        if (!sessions.has(id)) {
          send(res, 410, errorReply(410, 'infra_error', 'SF_ERR_FAKE_SESSION_LOST', `session ${id} is gone`).body)
          return
        }
        if (req.method === 'DELETE' && !m[2]) {
          sessions.delete(id)
          res.writeHead(204).end()
          return
        }
        if (req.method === 'POST' && m[2]) {
          const out = await run(body as unknown as ExecRequest, 'session', id)
          if (isHttpReply(out)) send(res, out.http, out.body, out.headers)
          else send(res, 200, out)
          return
        }
      }
      send(
        res,
        404,
        errorReply(404, 'invalid_request', 'SF_ERR_FAKE_NOT_FOUND', `no route ${req.method} ${url.pathname}`).body
      )
    })().catch((err) => {
      if (!res.headersSent) send(res, 500, String(err))
      else res.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    sessions: () => [...sessions.keys()],
    loseSession: (id) => {
      sessions.delete(id)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
