/**
 * MCP server at `/mcp` over the streamable HTTP transport (the official
 * `@modelcontextprotocol/sdk`), in stateless mode: every POST gets a fresh server and transport,
 * so any gateway replica answers any call (sandfleet sessions carry their own routing in their
 * ids). The tools are in mcp-tools.ts, loaded with the SDK on the first POST.
 *
 * @example
 * ```ts
 * await app.register(mcpCompat, { execute, sessions })
 * // client: new StreamableHTTPClientTransport(new URL('http://127.0.0.1:8080/mcp'))
 * ```
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify'
import type { McpOptions } from './mcp-tools.ts'

export type { McpOptions } from './mcp-tools.ts'

type Sdk = [typeof import('./mcp-tools.ts'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]
let sdk: Promise<Sdk> | undefined
const loadSdk = async (): Promise<Sdk> =>
  await (sdk ??= Promise.all([import('./mcp-tools.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]))

/** `/mcp` as a Fastify plugin (stateless streamable HTTP: POST; GET and DELETE answer 405). */
export const mcpCompat: FastifyPluginAsync<McpOptions> = async (app, opts) => {
  app.post('/mcp', async (request, reply) => {
    const [{ buildMcpServer }, { StreamableHTTPServerTransport }] = await loadSdk()
    const server = buildMcpServer(opts.sessionsFor === undefined ? opts : { ...opts, sessions: opts.sessionsFor(request) })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    reply.hijack()
    reply.raw.on('close', () => { void transport.close(); void server.close() })
    try {
      await server.connect(transport)
      await transport.handleRequest(request.raw, reply.raw, request.body)
    } catch (err) {
      request.log.error({ err }, 'mcp request failed')
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' })
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }))
      }
    }
  })
  const notAllowed = async (_req: unknown, reply: FastifyReply): Promise<void> => {
    await reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless (POST only)' }, id: null })
  }
  app.get('/mcp', notAllowed)
  app.delete('/mcp', notAllowed)
}
