/** `POST /v1/execute`: one {@link ExecRequest} in, one {@link ExecResult} out. */
import type { FastifyInstance } from 'fastify'
import type { ExecRequest } from '@sandfleet/protocol'
import type { Router } from '../../runners/router.ts'
import type { RouteSchemas } from '../../schemas.ts'

/**
 * Registers the route. A valid call the pipeline lets through is answered 200 with a result
 * whose `status` says what happened (fleet statuses included); non-2xx answers are error bodies.
 */
export function executeRoute(app: FastifyInstance, router: Router, schemas: RouteSchemas): void {
  app.post<{ Body: ExecRequest }>(
    '/v1/execute',
    {
      config: { calls: { of: (body: ExecRequest) => [body] } },
      schema: {
        operationId: 'execute',
        summary: 'Run one snippet in a fresh sandbox',
        tags: ['execute'],
        body: schemas.execRequest,
        response: { 200: schemas.execResult, '4xx': schemas.errorBody, '5xx': schemas.errorBody }
      }
    },
    (request) => router.execute(request.body, request.callContext)
  )
}
