/**
 * The MCP tools of `/mcp` (mcp.ts): `run_python` and `run_javascript` (stateless),
 * `create_session`, `run_in_session`, `close_session`, and `judge` (a program against its tests), on
 * the official `@modelcontextprotocol/sdk`.
 * Every tool result carries `status`, `stdout` and `stderr` (as structured content and as text;
 * the structured content also `exit_code`, `duration_ms`, `cpu_ms` when measured, `error`);
 * a status other than `ok` is marked `isError`. mcp.ts imports this module (and the SDK, with
 * zod: a third of a second of start-up) on the first MCP request.
 */
import type { FastifyRequest } from 'fastify'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import {
  JUDGE_LANGUAGE_NAMES,
  JUDGE_LIMITS,
  LIMITS,
  SESSION_LIMITS,
  failedJudgeResult,
  judgeRequestProblem,
  timeoutMsOf,
  type CallContext,
  type JudgeRequest,
  type Language
} from '@sandfleet/protocol'
import { resultOfThrown, settle, settleJudge, type CompatSessions, type ExecuteFn, type JudgeFn } from '../compat.ts'
import { RunnerRefusal } from '../../errors.ts'
import { toJudgeToolResult, toToolResult } from './tool-results.ts'

/** Options of the `/mcp` plugin (`mcpCompat`, mcp.ts). */
export interface McpOptions {
  execute: ExecuteFn
  /** The fleet's judge (the `judge` tool); without it the tool answers an error result. */
  judge?: JudgeFn
  /** Sessions; without them the session tools answer an error result. */
  sessions?: CompatSessions
  /** Sessions as the caller of one request sees them (bound to its API key); wins over `sessions`. */
  sessionsFor?: (request: FastifyRequest) => CompatSessions
  /**
   * The gateway's longest call, offered in the tools' schemas and their default (default: the
   * protocol's bound). The gateway's pipeline holds the calls to it (mcp.ts declares them).
   */
  limits?: { maxTimeoutMs: number }
  /** Server name and version announced to clients. */
  name?: string
  version?: string
}

/**
 * `timeout_ms` as the gateway accepts it: the schema a client sees is the limit it meets, and
 * gives the default of a call without one (the one place MCP's calls get it, as the route
 * schemas give /v1's). Its `maximum` is said, not checked here: the deployment's limit is the
 * pipeline's limits stage's.
 */
const timeoutSchema = (maxTimeoutMs: number) => {
  const defaultMs = timeoutMsOf({}, maxTimeoutMs)
  return z
    .number()
    .int()
    .min(LIMITS.minTimeoutMs)
    .default(defaultMs)
    .meta({ maximum: maxTimeoutMs })
    .describe(`Wall-clock limit, in milliseconds (default ${defaultMs}, at most ${maxTimeoutMs})`)
}

/** What a session refusal means to the model calling the tool. */
const SESSION_HINTS: Record<string, string> = {
  SF_ERR_SESSION_NOT_FOUND: 'the session is closed, expired or unknown; create_session opens a new one',
  SF_ERR_SESSION_LOST:
    "the fleet lost the session (its sandbox or runner died; not your code's fault); create_session opens a new one to run it again"
}

function errorResult(err: unknown): CallToolResult {
  const r = resultOfThrown(err)
  const code = r.error?.type ?? 'SF_ERR_GATEWAY_INTERNAL'
  const hint = SESSION_HINTS[code] === undefined ? '' : ` (${SESSION_HINTS[code]})`
  return {
    content: [{ type: 'text', text: `status: ${r.status}\nerror: ${code}: ${r.error?.message ?? ''}${hint}` }],
    structuredContent: { status: r.status, stdout: '', stderr: '', error: r.error },
    isError: true
  }
}

/** Builds the MCP server with sandfleet's tools, for one request: its calls run in its `context`. */
export function buildMcpServer(opts: McpOptions, context: CallContext): McpServer {
  const server = new McpServer({ name: opts.name ?? 'sandfleet', version: opts.version ?? '0.1.0' })
  const maxTimeoutMs = opts.limits?.maxTimeoutMs ?? LIMITS.maxTimeoutMs
  const timeout = timeoutSchema(maxTimeoutMs)
  const run =
    (language: Language) =>
    async (args: { code: string; stdin?: string | undefined; timeout_ms: number }): Promise<CallToolResult> => {
      const req: Parameters<ExecuteFn>[0] = { language, code: args.code, timeout_ms: args.timeout_ms }
      if (args.stdin !== undefined) req.stdin = args.stdin
      return toToolResult(await settle(() => opts.execute(req, context)))
    }
  const input = {
    code: z.string().describe('The program'),
    stdin: z.string().optional().describe('Standard input'),
    timeout_ms: timeout
  }
  server.registerTool(
    'run_python',
    {
      description: 'Run Python 3 in a fresh sandbox (no state kept). Returns status, stdout, stderr.',
      inputSchema: input
    },
    run('python')
  )
  server.registerTool(
    'run_javascript',
    {
      description: 'Run JavaScript in a fresh sandbox (no state kept). Returns status, stdout, stderr.',
      inputSchema: input
    },
    run('javascript')
  )

  const judge = opts.judge
  server.registerTool(
    'judge',
    {
      description:
        "Judge a program against its tests in one sandbox (compiled once, each test a fresh process, the output compared outside it). Returns the verdict (accepted, wrong_answer, time_limit, memory_limit, runtime_error, compile_error, output_limit), tests passed of total, and the first failing test's output.",
      inputSchema: {
        language: z
          .enum(JUDGE_LANGUAGE_NAMES as [string, ...string[]])
          .optional()
          .describe('python (default), cpp, c or javascript, or an alias (c++, py3, …)'),
        code: z.string().describe('The program: it reads stdin and prints'),
        tests: z
          .array(
            z.object({
              stdin: z.string().optional().describe('Standard input of this test'),
              expected: z.string().optional().describe('What it must print (absent: it must only end well)')
            })
          )
          .min(1)
          .max(JUDGE_LIMITS.maxTests)
          .describe('The tests, in order'),
        compare: z
          .enum(['lines', 'exact', 'tokens'])
          .optional()
          .describe('lines (default: trailing whitespace ignored), exact, or tokens'),
        run_all: z.boolean().optional().describe('Run every test (default: stop at the first failing one)'),
        timeout_ms: z
          .number()
          .int()
          .min(LIMITS.minTimeoutMs)
          .default(Math.min(JUDGE_LIMITS.defaultTimeoutMs, maxTimeoutMs))
          .meta({ maximum: maxTimeoutMs })
          .describe(
            `Wall-clock limit of each test, in milliseconds (default ${Math.min(JUDGE_LIMITS.defaultTimeoutMs, maxTimeoutMs)}, at most ${maxTimeoutMs})`
          )
      }
    },
    async (args) => {
      const request: JudgeRequest = {
        language: args.language ?? 'python',
        code: args.code,
        tests: args.tests,
        timeout_ms: args.timeout_ms,
        compile_timeout_ms: Math.min(JUDGE_LIMITS.defaultCompileTimeoutMs, maxTimeoutMs)
      }
      if (args.compare !== undefined) request.compare = args.compare
      if (args.run_all !== undefined) request.run_all = args.run_all
      const language = request.language as string
      const problem = judgeRequestProblem(request)
      if (problem !== undefined)
        return toJudgeToolResult(
          failedJudgeResult(
            'invalid_request',
            language,
            'SF_ERR_GATEWAY_INVALID_REQUEST',
            `${problem.field}: ${problem.message}`
          )
        )
      if (judge === undefined)
        return toJudgeToolResult(
          failedJudgeResult(
            'invalid_request',
            language,
            'SF_ERR_GATEWAY_INVALID_REQUEST',
            'this gateway judges nothing'
          )
        )
      return toJudgeToolResult(await settleJudge(async () => await judge(request, context), language))
    }
  )

  const sessions = opts.sessions
  const noSessions = (): CallToolResult =>
    errorResult(
      new RunnerRefusal(501, {
        status: 'invalid_request',
        error: { code: 'SF_ERR_SESSION_DISABLED', message: 'sessions are not enabled on this gateway' }
      })
    )
  server.registerTool(
    'create_session',
    {
      description:
        'Open a Python session: variables, imports, functions and files persist between run_in_session calls. Returns session_id.',
      inputSchema: {
        language: z.enum(['python', 'javascript']).optional(),
        ttl_s: z
          .number()
          .int()
          .min(SESSION_LIMITS.minTtlS)
          .max(SESSION_LIMITS.maxTtlS)
          .optional()
          .describe('Idle seconds before it closes (default 600)')
      }
    },
    async (args) => {
      if (sessions === undefined) return noSessions()
      try {
        const id = await sessions.create({
          language: args.language ?? 'python',
          ttl_s: args.ttl_s ?? SESSION_LIMITS.defaultTtlS,
          memory_mb: SESSION_LIMITS.defaultMemoryMb
        })
        return {
          content: [{ type: 'text', text: `session_id: ${id}` }],
          structuredContent: { status: 'ok', session_id: id, stdout: '', stderr: '' }
        }
      } catch (err) {
        return errorResult(err)
      }
    }
  )
  server.registerTool(
    'run_in_session',
    {
      description: 'Run a cell in a session. A cell ending in an expression also returns its repr as result.',
      inputSchema: { session_id: z.string().min(1), code: z.string(), timeout_ms: timeout }
    },
    async (args) => {
      if (sessions === undefined) return noSessions()
      try {
        return toToolResult(await sessions.execute(args.session_id, { code: args.code, timeout_ms: args.timeout_ms }))
      } catch (err) {
        return errorResult(err)
      }
    }
  )
  server.registerTool(
    'close_session',
    { description: 'Close a session and free its state.', inputSchema: { session_id: z.string().min(1) } },
    async (args) => {
      if (sessions === undefined) return noSessions()
      try {
        await sessions.close(args.session_id)
        return {
          content: [{ type: 'text', text: 'closed' }],
          structuredContent: { status: 'ok', stdout: '', stderr: '' }
        }
      } catch (err) {
        return errorResult(err)
      }
    }
  )
  return server
}
