/**
 * E2B-compatible API: agents written for E2B's SDK (`e2b`, `@e2b/code-interpreter`) run on sandfleet with
 * `E2B_API_URL` and `E2B_SANDBOX_URL` set to the gateway (one URL for both will do). An E2B sandbox is a sandfleet
 * sandbox: a session of the Python sandbox, with its isolation (its own namespaces, no network, its limits), its
 * code contexts, files and processes (the protocol's sandbox.ts).
 *
 * - the API URL (e2b-lifecycle.ts, `X-API-Key`: the gateway's API keys): create, list, info, timeout, connect, kill;
 * - the sandbox URL (e2b-sandbox-url.ts, the sandbox's `X-Access-Token`), told apart by its `E2b-Sandbox-Port`
 *   header: the code interpreter (e2b-interpreter.ts), envd's files (e2b-envd.ts) and its Connect services
 *   (e2b-rpc.ts).
 *
 * Register it encapsulated: its error handlers, body parsers and lax validation stay here.
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { LIMITS } from '@sandfleet/protocol'
import { depthLimited } from '@sandfleet/protocol/http'
import { GatewayError, RunnerRefusal } from '../../errors.ts'
import { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import type { Api, ApiContext } from '../api.ts'
import { BadInput, lifecycleRoutes } from './e2b-lifecycle.ts'
import { envdRoutes, installRawBodies } from './e2b-envd.ts'
import { interpreterRoutes } from './e2b-interpreter.ts'
import { rpcRoutes } from './e2b-rpc.ts'
import { installPortConstraint, sandboxAuth, sandboxErrorHandler } from './e2b-sandbox-url.ts'
import { apiRefusal } from './e2b-shapes.ts'

/** The API URL's routes, with their error shape. */
async function apiUrl(app: FastifyInstance, context: { sandboxes: FleetSandboxes }): Promise<void> {
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const id = (request.params as { sandboxID?: string } | undefined)?.sandboxID
    if (err instanceof RunnerRefusal) {
      const { statusCode, body } = apiRefusal(err, id)
      return reply.code(statusCode).send(body)
    }
    const invalidJson =
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      err instanceof SyntaxError
    const statusCode = invalidJson
      ? 400
      : err instanceof BadInput
        ? 400
        : typeof err.statusCode === 'number' && err.statusCode >= 400
          ? err.statusCode
          : 500
    if (statusCode >= 500 && !(err instanceof GatewayError)) request.log.error({ err }, 'e2b API route failed')
    const message = invalidJson
      ? `the body is not valid JSON: ${err.message}`
      : statusCode >= 500 && !(err instanceof GatewayError)
        ? 'internal error'
        : err.message
    return reply.code(statusCode).send({ code: statusCode, message })
  })
  lifecycleRoutes(app, context.sandboxes)
}

/** The sandbox URL's routes, with their own auth, body parsers and error shapes. */
async function sandboxUrl(
  app: FastifyInstance,
  context: { sandboxes: FleetSandboxes; api: ApiContext }
): Promise<void> {
  const { sandboxes, api } = context
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  // the interpreter takes an empty JSON body (a context's restart), as its own server does
  const parse = depthLimited(app.getDefaultJsonParser('error', 'error'), LIMITS.maxJsonDepth)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined)
    else parse(request as never, body as string, done)
  })
  installRawBodies(app)
  app.setErrorHandler(sandboxErrorHandler)
  app.addHook('onRequest', sandboxAuth(sandboxes, api.tenants))
  interpreterRoutes(app, sandboxes, api.config.maxTimeoutMs)
  envdRoutes(app, sandboxes)
  rpcRoutes(app, sandboxes, api.config.maxCodeBytes)
}

/** E2B on the gateway's fleet. */
const routes: Api['routes'] = async (app, context) => {
  const sandboxes = new FleetSandboxes(context.runners)
  installPortConstraint(app)
  await app.register(apiUrl, { sandboxes })
  await app.register(sandboxUrl, { sandboxes, api: context })
}

/** E2B's sandbox API and its SDK's sandbox URL. */
export const e2bApi: Api = {
  routes,
  tags: [
    {
      name: 'E2B',
      description:
        "E2B's sandbox API (what its SDK calls with E2B_API_URL): each sandbox a session of the Python sandbox. Its sandbox URL (E2B_SANDBOX_URL: the code interpreter, files and commands, told apart by the E2b-Sandbox-Port header) speaks E2B's own protocols and is described in docs/compat.md"
    }
  ],
  imitates: "E2B's"
}
