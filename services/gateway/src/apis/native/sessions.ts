/**
 * Sessions: `POST /v1/sessions` → 201 SessionInfo; `GET /v1/sessions/:id`;
 * `POST /v1/sessions/:id/execute` (a cell) → ExecResult, a call to the pipeline as any other;
 * `DELETE /v1/sessions/:id` → 204. Errors: 404 `SF_ERR_SESSION_NOT_FOUND`, 410
 * `SF_ERR_SESSION_LOST` (its runner or sandbox died: open a new session), 409
 * `SF_ERR_SESSION_BUSY`, 429 `SF_ERR_SESSION_LIMIT`, 501 `SF_ERR_SESSION_DISABLED`.
 */
import type { FastifyInstance } from 'fastify'
import type { SessionCreateRequest, SessionExecRequest } from '@sandfleet/protocol'
import { callerKey } from '../../plugins/auth.ts'
import type { RouteSchemas } from '../../schemas.ts'
import type { FleetSessions } from '../../sessions/fleet-sessions.ts'

/** Registers the session routes. */
export function sessionRoutes(app: FastifyInstance, sessions: FleetSessions, schemas: RouteSchemas): void {
  const errors = { '4xx': schemas.errorBody, '5xx': schemas.errorBody }
  const params = {
    type: 'object',
    properties: { id: { type: 'string', minLength: 1, maxLength: 512 } },
    required: ['id']
  }
  const tags = ['sessions']

  app.post<{ Body: SessionCreateRequest | undefined }>(
    '/v1/sessions',
    {
      config: { calls: { of: (body: SessionCreateRequest | undefined) => [{ memory_mb: body?.memory_mb }] } },
      schema: {
        operationId: 'createSession',
        summary: 'Open a stateful session',
        tags,
        body: schemas.sessionCreate,
        response: { 201: schemas.sessionInfo, ...errors }
      }
    },
    async (request, reply) => await reply.code(201).send(await sessions.create(request.body ?? {}, callerKey(request)))
  )

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    {
      schema: {
        operationId: 'getSession',
        summary: "A session's info",
        tags,
        params,
        response: { 200: schemas.sessionInfo, ...errors }
      }
    },
    async (request) => await sessions.get(request.params.id, callerKey(request))
  )

  app.post<{ Params: { id: string }; Body: SessionExecRequest }>(
    '/v1/sessions/:id/execute',
    {
      config: { calls: { of: (body: SessionExecRequest) => [body] } },
      schema: {
        operationId: 'executeInSession',
        summary: "Run a cell in the session's state",
        tags,
        params,
        body: schemas.sessionExec,
        response: { 200: schemas.execResult, ...errors }
      }
    },
    async (request) => await sessions.execute(request.params.id, request.body, callerKey(request), request.callContext)
  )

  app.delete<{ Params: { id: string } }>(
    '/v1/sessions/:id',
    {
      schema: {
        operationId: 'closeSession',
        summary: 'Close a session',
        tags,
        params,
        response: { 204: { description: 'Closed', type: 'null' }, ...errors }
      }
    },
    async (request, reply) => {
      await sessions.close(request.params.id, callerKey(request))
      return await reply.code(204).send()
    }
  )
}
