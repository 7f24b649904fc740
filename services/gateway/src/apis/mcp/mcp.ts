/**
 * MCP server at `/mcp` over the streamable HTTP transport (the official
 * `@modelcontextprotocol/sdk`), in stateless mode: every POST gets a fresh server and transport,
 * so any gateway replica answers any call (sandfleet sessions carry their own routing in their
 * ids). The tools are in mcp-tools.ts, loaded with the SDK on the first POST. A POST declares its
 * calls for the gateway's pipeline: each `tools/call` weighs one, and the code and `timeout_ms`
 * of those that run code are held to the deployment's limits; one over them is answered, before
 * the SDK sees the message, with a tool result marked `isError` naming the field.
 *
 * @example
 * ```ts
 * await app.register(mcpCompat, { execute, sessions })
 * // client: new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8080/mcp'))
 * ```
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import { Type } from '@sinclair/typebox'
import { ErrorBodySchema, failedResult } from '@sandfleet/protocol'
import { callerKey } from '../../plugins/auth.ts'
import { judgeCall, type Call, type OverLimit } from '../../pipeline/call-limits.ts'
import type { Refusal, RouteCalls } from '../../pipeline/route-calls.ts'
import { plain } from '../../schemas.ts'
import type { Api } from '../api.ts'
import { compatPath } from '../compat.ts'
import { describeOnly } from '../fastapi/fastapi-schemas.ts'
import type { McpOptions } from './mcp-tools.ts'
import { toToolResult } from './tool-results.ts'

export type { McpOptions } from './mcp-tools.ts'

type Sdk = [typeof import('./mcp-tools.ts'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]
let sdk: Promise<Sdk> | undefined
const loadSdk = async (): Promise<Sdk> =>
  await (sdk ??= Promise.all([import('./mcp-tools.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]))

const JsonRpcId = Type.Union([Type.String(), Type.Integer(), Type.Null()])

/** A JSON-RPC 2.0 request or notification (an MCP message: initialize, tools/list, tools/call, …). */
const JsonRpcRequestSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(JsonRpcId),
    method: Type.String({ description: 'initialize, tools/list, tools/call, notifications/initialized, …' }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown()))
  },
  { title: 'JsonRpcRequest' }
)

/** A JSON-RPC 2.0 answer: a result, or an error. */
const JsonRpcResponseSchema = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: JsonRpcId,
    result: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'tools/call: {content, structuredContent: {status, stdout, stderr, …}, isError}'
      })
    ),
    error: Type.Optional(
      Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })
    )
  },
  { title: 'JsonRpcResponse' }
)

/**
 * A JSON-RPC batch: several messages in one POST, answered by an array of their answers (the transport takes up to
 * 100).
 */
const JsonRpcBatchSchema = Type.Array(JsonRpcRequestSchema, {
  minItems: 1,
  maxItems: 100,
  description: 'A JSON-RPC batch: its requests are answered in one array'
})

const ErrorBody = plain(ErrorBodySchema)
const tags = ['MCP']
const jsonOrSse = {
  'application/json': {
    schema: Type.Union([
      JsonRpcResponseSchema,
      Type.Array(JsonRpcResponseSchema, { description: "The answers to a batch's requests" })
    ])
  },
  'text/event-stream': { schema: { type: 'string', description: 'Server-sent events, each a JSON-RPC message' } }
}
const notAllowedSchema = {
  tags,
  response: {
    405: { description: 'Not allowed: this MCP server is stateless (POST only)', ...JsonRpcResponseSchema },
    '4xx': { description: 'Refused by the gateway before the route (no valid API key, …)', ...ErrorBody }
  }
}

/** The tools whose arguments are a call: their `code` and `timeout_ms`. */
const CODE_TOOLS: ReadonlySet<string> = new Set(['run_python', 'run_javascript', 'run_in_session'])

type Message = { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } } | null

const messagesOf = (body: unknown): Message[] => (Array.isArray(body) ? body : [body]) as Message[]
const isToolCall = (m: Message): boolean => m?.method === 'tools/call'

/** The call of one `tools/call` message: its arguments when its tool runs code, nothing to hold otherwise. */
function callOf(m: Message): Call {
  const args = m?.params?.arguments
  if (typeof args !== 'object' || args === null) return {}
  // the judge tool's program, and its time limit (its compile step's is the deployment's own, within it)
  if (m?.params?.name === 'judge') {
    const { code, timeout_ms: timeoutMs } = args as Record<string, unknown>
    return judgeCall({ code: code as string, timeout_ms: timeoutMs as number })
  }
  if (!CODE_TOOLS.has(m?.params?.name as string)) return {}
  const { code, timeout_ms: timeoutMs } = args as Record<string, unknown>
  return { code: code as string, timeout_ms: timeoutMs as number }
}

/**
 * A POST's calls, one per `tools/call` message (a message or a JSON-RPC batch); a call over a
 * limit is answered a tool error result, and in a batch the other requests a JSON-RPC error
 * saying they were not run.
 */
const mcpCalls: RouteCalls<unknown> = {
  of: (body) => messagesOf(body).filter(isToolCall).map(callOf),
  weight: (_body, calls) => calls.length,
  refuse: (over: OverLimit, body): Refusal => {
    const messages = messagesOf(body)
    const at = messages.filter(isToolCall)[over.index ?? 0]
    const answer = (m: Message): unknown =>
      m === at
        ? {
            jsonrpc: '2.0',
            id: m?.id ?? null,
            result: toToolResult(failedResult('invalid_request', 'SF_ERR_GATEWAY_INVALID_REQUEST', over.message))
          }
        : {
            jsonrpc: '2.0',
            id: m?.id ?? null,
            error: { code: -32602, message: "not run: a tools/call of this batch is over this deployment's limits" }
          }
    const requests = messages.filter((m) => m?.id !== undefined)
    return { statusCode: 200, payload: Array.isArray(body) ? requests.map(answer) : answer(at as Message) }
  }
}

/** MCP on the gateway's pipeline: a caller's sessions are those of its API key. */
const routes: Api['routes'] = async (app, context) => {
  const { execute, judge, sessionsFor } = compatPath(context)
  await app.register(mcpCompat, {
    execute,
    judge,
    sessionsFor: (request) => sessionsFor(callerKey(request)),
    limits: { maxTimeoutMs: context.config.maxTimeoutMs }
  })
}

/** `/mcp` as a Fastify plugin (stateless streamable HTTP: POST; GET and DELETE answer 405). */
export const mcpCompat: FastifyPluginAsync<McpOptions> = async (app, opts) => {
  describeOnly(app)
  app.post(
    '/mcp',
    {
      config: { calls: mcpCalls },
      schema: {
        operationId: 'mcpMessage',
        summary:
          'MCP (streamable HTTP, stateless): a JSON-RPC message or a batch of them; the tools run_python, run_javascript, create_session, run_in_session, close_session, judge',
        description:
          "Send Accept: application/json, text/event-stream. A tool's outcome is in its result (isError for any status but ok), never in the HTTP status.",
        tags,
        // A request with an id: one without is a notification, answered 202 with no body.
        body: Type.Union([JsonRpcRequestSchema, JsonRpcBatchSchema], {
          examples: [
            {
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'run_python', arguments: { code: 'print(6 * 7)' } }
            }
          ]
        }),
        response: {
          200: { description: 'The JSON-RPC answer', content: jsonOrSse },
          202: { description: 'A notification was accepted (no body)', type: 'null' },
          401: { description: 'No valid API key', ...ErrorBody },
          429: {
            description:
              "The API key's quota or the gateway's admission refused the call (Retry-After says when to retry)",
            ...ErrorBody
          },
          '4xx': {
            description:
              'A message the transport refuses (not JSON-RPC, a wrong Accept header: a JSON-RPC error) or the gateway refuses before it (not JSON, too large: an ErrorBody)',
            anyOf: [JsonRpcResponseSchema, ErrorBody]
          },
          '5xx': { description: 'The server failed: a JSON-RPC error', ...JsonRpcResponseSchema }
        }
      }
    },
    async (request, reply) => {
      const [{ buildMcpServer }, { StreamableHTTPServerTransport }] = await loadSdk()
      const server = buildMcpServer(
        opts.sessionsFor === undefined ? opts : { ...opts, sessions: opts.sessionsFor(request) },
        request.callContext
      )
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      reply.hijack()
      reply.raw.on('close', () => {
        void transport.close()
        void server.close()
      })
      try {
        await server.connect(transport)
        await transport.handleRequest(request.raw, reply.raw, request.body)
      } catch (err) {
        request.log.error({ err }, 'mcp request failed')
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' })
          reply.raw.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null })
          )
        }
      }
    }
  )
  const notAllowed = async (_req: unknown, reply: FastifyReply): Promise<void> => {
    await reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (POST only)' },
        id: null
      })
  }
  app.get(
    '/mcp',
    {
      schema: {
        operationId: 'mcpStream',
        summary: 'MCP server-to-client stream: not offered (stateless server)',
        ...notAllowedSchema
      }
    },
    notAllowed
  )
  app.delete(
    '/mcp',
    {
      schema: {
        operationId: 'mcpEndSession',
        summary: 'MCP session end: not offered (stateless server)',
        ...notAllowedSchema
      }
    },
    notAllowed
  )
}

/** MCP, over streamable HTTP. */
export const mcpApi: Api = {
  routes,
  tags: [{ name: 'MCP', description: 'Model Context Protocol over streamable HTTP' }],
  imitates: 'MCP'
}
