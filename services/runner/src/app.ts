/**
 * The runner's internal HTTP API, as a Fastify instance that does not listen (tests use
 * `inject()`; `main.ts` listens):
 *
 * - `POST /v1/execute`: an ExecRequest → an ExecResult (400 ErrorBody when it is refused).
 * - `POST /v1/execute/batch`: `{requests}` → `{results}` in order; with
 *   `Accept: application/x-ndjson` each result streams as `{index, result}` when it finishes.
 *   On both, the headers of the call's context (`contextOfHeaders` in the protocol): how long
 *   the caller lets the jobs wait for a sandbox (`RUNNER_HEADERS.queueTimeoutMs`; the runner's
 *   `queueTimeoutMs` caps it), the tenant they run for, the request's id at the gateway (the
 *   runner's request takes it as its own, on its log lines).
 * - `POST /v1/judge`: a JudgeRequest → a JudgeResult (400 ErrorBody naming the field when it is refused);
 *   `POST /v1/judge/batch`: `{requests}` → `{results}`, or streamed as `{index, result}` like an execute batch; the
 *   same headers.
 * - `GET /v1/runner/load` (RunnerLoad), `GET /v1/info` (RunnerInfo: backend, isolation, manifest), `GET /healthz`, `GET
 *   /readyz`, `GET /metrics`.
 * - the session API (`sessions/session-routes.ts`).
 *
 * Every error response is the protocol's ErrorBody, naming the field at fault. With the runner's
 * `runnerSecret` set, every route but `/healthz` and `/readyz` asks for it (`auth.ts`).
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import {
  BatchRequestSchema,
  BatchResponseSchema,
  ErrorBodySchema,
  ExecRequestSchema,
  ExecResultSchema,
  JudgeBatchRequestSchema,
  JudgeBatchResponseSchema,
  JudgeRequestSchema,
  JudgeResultSchema,
  NDJSON,
  RUNNER_HEADERS,
  RUNNER_PATHS,
  RunnerInfoSchema,
  contextOfHeaders,
  RunnerLoadSchema,
  SessionCreateRequestSchema,
  SessionExecRequestSchema,
  SessionInfoSchema,
  type BatchRequest,
  type CallContext,
  type ErrorBody,
  type ExecRequest,
  type JudgeBatchRequest,
  type JudgeRequest
} from '@sandfleet/protocol'
import {
  NdjsonWriter,
  callerSignal,
  errorBody as registryBody,
  frameworkErrorHandler,
  installErrorShape,
  installJsonBody,
  type EdgeOptions
} from '@sandfleet/protocol/http'
import { bearerCheck, OPEN_PATHS } from './auth.ts'
import { RUNNER_EDGE_CODES, RUNNER_ERRORS, type RunnerErrorCode } from './errors.ts'
import type { Runner } from './runner/runner.ts'
import { sandboxRoutes } from './sessions/sandbox-routes.ts'
import { sessionRoutes } from './sessions/session-routes.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The context of the request's calls, from its headers (on `/v1/execute`, `/v1/judge` and their batches). */
    callContext: CallContext
  }
}

/** Options of {@link buildRunnerApp}. */
export interface RunnerAppOptions {
  /** A pino logger instance (anything with `child`, `fatal`, `trace`), or none (default). */
  logger?: object
  /** Largest body accepted (default: the runner's `maxBodyBytes`). */
  maxBodyBytes?: number
}

/** The ErrorBody of one of the runner's codes. */
function errorBody(code: RunnerErrorCode, message?: string, field?: string): ErrorBody {
  return registryBody(RUNNER_ERRORS, code, message, field)
}

const BAD_QUEUE_TIMEOUT = errorBody(
  'SF_ERR_RUNNER_INVALID_REQUEST',
  `${RUNNER_HEADERS.queueTimeoutMs} must be a whole number of milliseconds`,
  RUNNER_HEADERS.queueTimeoutMs
)

/** The runner's internal API on `runner`; see the module comment. */
export function buildRunnerApp(runner: Runner, options: RunnerAppOptions = {}): FastifyInstance {
  const logger = options.logger as { child?: unknown } | undefined
  const edge: EdgeOptions<RunnerErrorCode> = {
    registry: RUNNER_ERRORS,
    codes: RUNNER_EDGE_CODES,
    service: 'runner',
    maxBodyBytes: options.maxBodyBytes ?? runner.config.maxBodyBytes
  }
  const app = Fastify({
    ...(typeof logger?.child === 'function' ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: edge.maxBodyBytes,
    // While the server closes, a request on a connection still open reaches its route, whose runner (closed by then)
    // answers SF_ERR_RUNNER_DRAINING, nothing run (maybe_ran false: a gateway tries it elsewhere); Fastify's own 503
    // would carry no result, which a gateway cannot tell from a call that may have run.
    return503OnClosing: false,
    requestIdHeader: RUNNER_HEADERS.requestId,
    // verbose: an error carries the schema it broke (an unknown field's "did you mean", schema-problem.ts)
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: false,
        verbose: true
      }
    },
    logController: new LogController({ disableRequestLogging: true }),
    frameworkErrors: frameworkErrorHandler(edge)
  } as Parameters<typeof Fastify>[0]) as unknown as FastifyInstance

  installJsonBody(app)
  installErrorShape(app, edge)
  app.addSchema(ExecRequestSchema)
  app.addSchema(ExecResultSchema)
  app.addSchema(JudgeRequestSchema)
  app.addSchema(JudgeResultSchema)
  for (const schema of [SessionCreateRequestSchema, SessionExecRequestSchema, SessionInfoSchema]) app.addSchema(schema)

  if (runner.config.runnerSecret !== '') {
    const authorized = bearerCheck(runner.config.runnerSecret)
    const refusal = errorBody('SF_ERR_RUNNER_UNAUTHORIZED')
    // onRequest: before the body is read, so a caller without the secret costs no parsing
    app.addHook('onRequest', async (request, reply) => {
      const path = request.url.split('?', 1)[0]
      if (OPEN_PATHS.has(path) || authorized(request.headers.authorization)) return
      return await reply.code(401).header('www-authenticate', 'Bearer').send(refusal)
    })
  }

  const errorResponses = { 400: ErrorBodySchema, 503: ErrorBodySchema }
  /**
   * The call's context, made once from the request's headers (a 400 when its queue budget is not
   * whole milliseconds), its signal the response's: a caller that goes away (a gateway past its
   * deadline) takes its jobs still waiting out of the queue, and they never run.
   */
  app.decorateRequest('callContext', null as unknown as CallContext)
  const withContext = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const context = contextOfHeaders(request.headers, callerSignal(reply.raw), request.id)
    if (context === undefined) return await reply.code(400).send(BAD_QUEUE_TIMEOUT)
    request.callContext = context
  }

  app.post<{ Body: ExecRequest }>(
    RUNNER_PATHS.execute,
    {
      schema: { body: ExecRequestSchema, response: { 200: ExecResultSchema, ...errorResponses } },
      preHandler: withContext
    },
    async (request, reply) => {
      const call = runner.prepare(request.body, request.callContext)
      if (call.problem !== undefined)
        return await reply.code(400).send(errorBody(call.problem.code, call.problem.message, call.problem.field))
      return await runner.run(call)
    }
  )

  app.post<{ Body: BatchRequest }>(
    RUNNER_PATHS.batch,
    {
      schema: { body: BatchRequestSchema, response: { 200: BatchResponseSchema, ...errorResponses } },
      preHandler: withContext
    },
    async (request, reply) => {
      const calls = request.body.requests.map((r) => runner.prepare(r, request.callContext))
      for (let i = 0; i < calls.length; i++) {
        const problem = calls[i].problem
        if (problem !== undefined)
          return await reply
            .code(400)
            .send(
              errorBody(
                problem.code,
                `requests/${i}/${problem.field}: ${problem.message}`,
                `requests/${i}/${problem.field}`
              )
            )
      }
      const accept = request.headers.accept ?? ''
      if (!accept.includes(NDJSON)) return { results: await runner.runBatch(calls) }
      // Streaming: one line per result as it finishes, the lines ready in one turn written together.
      const lines = new NdjsonWriter()
      void runner
        .runBatch(calls, (index, result) => {
          lines.push({ index, result })
        })
        .then(() => {
          lines.end()
        })
      return await reply.header('content-type', NDJSON).send(lines.stream)
    }
  )

  app.post<{ Body: JudgeRequest }>(
    RUNNER_PATHS.judge,
    {
      schema: { body: JudgeRequestSchema, response: { 200: JudgeResultSchema, ...errorResponses } },
      preHandler: withContext
    },
    async (request, reply) => {
      const context = request.callContext
      const judge = runner.prepareJudge(request.body, context)
      if (judge.problem !== undefined)
        return await reply.code(400).send(errorBody(judge.problem.code, judge.problem.message, judge.problem.field))
      return await runner.runJudge(judge)
    }
  )

  app.post<{ Body: JudgeBatchRequest }>(
    RUNNER_PATHS.judgeBatch,
    {
      schema: { body: JudgeBatchRequestSchema, response: { 200: JudgeBatchResponseSchema, ...errorResponses } },
      preHandler: withContext
    },
    async (request, reply) => {
      const context = request.callContext
      const judges = request.body.requests.map((r) => runner.prepareJudge(r, context))
      for (let i = 0; i < judges.length; i++) {
        const problem = judges[i].problem
        if (problem !== undefined)
          return await reply
            .code(400)
            .send(
              errorBody(
                problem.code,
                `requests/${i}/${problem.field}: ${problem.message}`,
                `requests/${i}/${problem.field}`
              )
            )
      }
      if (!(request.headers.accept ?? '').includes(NDJSON)) return { results: await runner.runJudgeBatch(judges) }
      const lines = new NdjsonWriter()
      void runner
        .runJudgeBatch(judges, (index, result) => {
          lines.push({ index, result })
        })
        .then(() => {
          lines.end()
        })
      return await reply.header('content-type', NDJSON).send(lines.stream)
    }
  )

  sessionRoutes(app, () => runner.sessions)
  sandboxRoutes(app, () => runner.sandboxes)

  app.get(RUNNER_PATHS.load, { schema: { response: { 200: RunnerLoadSchema } } }, async () => runner.load())
  app.get(RUNNER_PATHS.info, { schema: { response: { 200: RunnerInfoSchema } } }, async () => runner.info())
  app.get('/healthz', async () => ({ status: 'ok', runner: runner.id, state: runner.state }))
  app.get('/readyz', async (_request, reply) => {
    const ready = runner.state === 'ready'
    return await reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : runner.state, runner: runner.id })
  })
  app.get('/metrics', async (_request, reply) => {
    const body = await runner.registry.metrics()
    return await reply.header('content-type', runner.registry.contentType).send(body)
  })
  return app
}
