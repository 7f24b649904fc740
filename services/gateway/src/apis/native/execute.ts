/** `POST /v1/execute`: one {@link ExecRequest} in, one {@link ExecResult} out. */
import type { FastifyInstance } from 'fastify'
import { GATEWAY_HEADERS, type ExecRequest } from '@sandfleet/protocol'
import type { Router } from '../../runners/router.ts'
import type { RouteSchemas } from '../../schemas.ts'

/**
 * Registers the route. A valid call the pipeline lets through is answered 200 with a result
 * whose `status` says what happened (fleet statuses included); non-2xx answers are error bodies.
 * A retry may name the runner that had the call (`GATEWAY_HEADERS.runner`): it goes there first
 * while that runner is up, which answers it from its first run.
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
        headers: {
          type: 'object',
          properties: {
            [GATEWAY_HEADERS.runner]: {
              type: 'string',
              description:
                'A retry: the runner that had this call (the `runner` of the answer to its request_id). The call goes there first while it is up, which answers it from its first run (replayed) instead of running it again'
            }
          }
        },
        response: { 200: schemas.execResult, '4xx': schemas.errorBody, '5xx': schemas.errorBody }
      }
    },
    (request) => {
      const runner = request.headers[GATEWAY_HEADERS.runner]
      return router.execute(request.body, request.callContext, typeof runner === 'string' ? runner : undefined)
    }
  )
}
