/**
 * The runner's internal session API, which gateways call (paths in `RUNNER_SESSION_PATHS`):
 *
 * - `POST /v1/sessions` (SessionCreateRequest) → 201 SessionInfo
 * - `GET /v1/sessions/:id` → SessionInfo
 * - `POST /v1/sessions/:id/execute` (SessionExecRequest) → ExecResult
 * - `DELETE /v1/sessions/:id` → 204
 *
 * The caller's key arrives in `x-sandfleet-key` (the gateway sends a digest of the API key) and
 * counts against `maxSessionsPerKey`. A {@link SessionError} becomes its HTTP status with an
 * ErrorBody carrying its code: 404 not found, 410 lost, 409 busy, 429 limit, 501 disabled. A cell
 * over the runner's own limits (`timeout_ms` past `maxTimeoutMs`, code past `maxCodeBytes`) is a
 * 400 naming the field, as a call to `/v1/execute` is (the session host refuses it with the
 * runner's error).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import {
  ErrorBodySchema,
  ExecResultSchema,
  RUNNER_HEADERS,
  RUNNER_SESSION_PATHS,
  SessionCreateRequestSchema,
  SessionExecRequestSchema,
  SessionInfoSchema,
  type SessionCreateRequest,
  type SessionExecRequest
} from '@sandfleet/protocol'
import { RegisteredError } from '@sandfleet/protocol/http'
import { SessionError } from '../errors.ts'
import type { SessionHost } from './session-host.ts'

/** Header that carries the caller's key (a digest, never the key itself) from the gateway. */
export const SESSION_KEY_HEADER = RUNNER_HEADERS.sessionKey

/** The caller's key digest ('' without one): a session answers only the key that opened it. */
function keyOf(headers: Record<string, string | string[] | undefined>): string {
  const key = headers[SESSION_KEY_HEADER]
  return typeof key === 'string' ? key : ''
}

/**
 * What `work` answers; a refusal it throws (a RegisteredError: SessionError, SandboxError, …) as its HTTP status and
 * ErrorBody. Anything else goes on to the edge's error handler. The session and sandbox routes both answer so.
 */
export async function answer<T>(reply: FastifyReply, work: () => Promise<T> | T): Promise<T | FastifyReply> {
  try {
    return await work()
  } catch (err) {
    if (err instanceof RegisteredError) return await reply.code(err.statusCode).send(err.toBody())
    throw err
  }
}

/** Registers the session routes on the runner's app; `sessions` undefined answers 501 to each. */
export function sessionRoutes(app: FastifyInstance, sessions: () => SessionHost | undefined): void {
  const host = (): SessionHost => {
    const s = sessions()
    if (s === undefined) throw new SessionError('SF_ERR_SESSION_DISABLED')
    return s
  }
  const errors = { '4xx': ErrorBodySchema, '5xx': ErrorBodySchema }
  const params = {
    type: 'object',
    properties: { id: { type: 'string', minLength: 1, maxLength: 512 } },
    required: ['id']
  }

  app.post<{ Body: SessionCreateRequest }>(
    RUNNER_SESSION_PATHS.create,
    {
      schema: { body: SessionCreateRequestSchema, response: { 201: SessionInfoSchema, ...errors } }
    },
    async (request, reply) =>
      await answer(reply, async () => {
        const info = await host().create(request.body ?? {}, keyOf(request.headers))
        return await reply.code(201).send(info)
      })
  )

  app.get<{ Params: { id: string } }>(
    RUNNER_SESSION_PATHS.one,
    {
      schema: { params, response: { 200: SessionInfoSchema, ...errors } }
    },
    async (request, reply) => await answer(reply, () => host().get(request.params.id, keyOf(request.headers)))
  )

  app.post<{ Params: { id: string }; Body: SessionExecRequest }>(
    RUNNER_SESSION_PATHS.execute,
    {
      schema: { params, body: SessionExecRequestSchema, response: { 200: ExecResultSchema, ...errors } }
    },
    async (request, reply) =>
      await answer(reply, async () => await host().execute(request.params.id, request.body, keyOf(request.headers)))
  )

  app.delete<{ Params: { id: string } }>(
    RUNNER_SESSION_PATHS.one,
    {
      schema: { params, response: { ...errors } }
    },
    async (request, reply) =>
      await answer(reply, async () => {
        await host().close(request.params.id, keyOf(request.headers))
        return await reply.code(204).send()
      })
  )
}
