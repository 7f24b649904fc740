/**
 * `POST /v1/execute/batch`: many requests in one call. As JSON, every result in request order;
 * with `Accept: application/x-ndjson`, one `{index, result}` line per item as soon as it finishes
 * (the lines of items that finish in one turn of the event loop go out in one chunk).
 */
import type { FastifyInstance } from 'fastify'
import { NDJSON, type BatchRequest } from '@sandfleet/protocol'
import { NdjsonWriter } from '@sandfleet/protocol/http'
import type { Router } from '../../runners/router.ts'
import type { RouteSchemas } from '../../schemas.ts'

/** Registers the route. */
export function batchRoute(app: FastifyInstance, router: Router, schemas: RouteSchemas): void {
  app.post<{ Body: BatchRequest }>(
    '/v1/execute/batch',
    {
      config: {
        calls: { of: (body: BatchRequest) => body.requests, batch: true, at: (index: number) => `requests/${index}` }
      },
      schema: {
        operationId: 'executeBatch',
        summary: 'Run many snippets; results in order, or streamed as NDJSON {index, result} lines in completion order',
        tags: ['execute'],
        body: schemas.batchRequest,
        response: {
          200: {
            description:
              'JSON: {results} in request order. With Accept: application/x-ndjson: one BatchStreamLine per item, as each finishes',
            content: {
              'application/json': { schema: schemas.batchResponse },
              [NDJSON]: { schema: schemas.batchStreamLine }
            }
          },
          '4xx': schemas.errorBody,
          '5xx': schemas.errorBody
        }
      }
    },
    async (request, reply) => {
      const context = request.callContext
      const accept = request.headers.accept
      if (typeof accept === 'string' && accept.includes(NDJSON)) {
        const lines = new NdjsonWriter()
        void router
          .executeBatch(request.body.requests, context, (index, result) => {
            lines.push({ index, result })
          })
          .then(() => {
            lines.end()
          })
        return reply.type(NDJSON).send(lines.stream)
      }
      const results = await router.executeBatch(request.body.requests, context)
      return { results }
    }
  )
}
