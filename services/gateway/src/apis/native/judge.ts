/**
 * `POST /v1/judge`: one program and its tests in, its verdict out (a {@link JudgeResult}); `POST /v1/judge/batch`:
 * many, as JSON in request order or, with `Accept: application/x-ndjson`, one `{index, result}` line per judge as it
 * finishes. Each judge is one call of the pipeline: its code, its checker's code and its time and memory limits held to
 * the deployment's; what the schema cannot say (tests given twice, a `call` test outside Python) is a 400 naming the
 * field before anything is taken.
 */
import type { FastifyInstance } from 'fastify'
import {
  NDJSON,
  judgeRequestProblem,
  type JudgeBatchRequest,
  type JudgeRequest,
  type JudgeRequestProblem
} from '@sandfleet/protocol'
import { NdjsonWriter } from '@sandfleet/protocol/http'
import { judgeCall } from '../../pipeline/call-limits.ts'
import type { Router } from '../../runners/router.ts'
import type { RouteSchemas } from '../../schemas.ts'

/** The first problem of a batch's judges, its field placed in the batch (`requests/3/tests`). */
function batchProblem(body: JudgeBatchRequest): JudgeRequestProblem | undefined {
  for (let i = 0; i < body.requests.length; i++) {
    const problem = judgeRequestProblem(body.requests[i] as JudgeRequest)
    if (problem !== undefined) return { field: `requests/${i}/${problem.field}`, message: problem.message }
  }
  return undefined
}

/** Registers `/v1/judge` and `/v1/judge/batch`. */
export function judgeRoutes(app: FastifyInstance, router: Router, schemas: RouteSchemas): void {
  const errors = { '4xx': schemas.errorBody, '5xx': schemas.errorBody }
  app.post<{ Body: JudgeRequest }>(
    '/v1/judge',
    {
      config: {
        calls: { of: (body: JudgeRequest) => [judgeCall(body)], problem: judgeRequestProblem, weight: () => 1 }
      },
      schema: {
        operationId: 'judge',
        summary: 'Judge one program against its tests in one sandbox: compiled once, each test a fresh process',
        description:
          "The verdict blames one party: the program (accepted, wrong_answer, time_limit, memory_limit, runtime_error, compile_error, output_limit), the fleet (overloaded, queue_timeout, infra_error: retriable, never the program's) or the caller's checker (invalid_request).",
        tags: ['judge'],
        body: schemas.judgeRequest,
        response: { 200: schemas.judgeResult, ...errors }
      }
    },
    async (request) => await router.judge(request.body, request.callContext)
  )

  app.post<{ Body: JudgeBatchRequest }>(
    '/v1/judge/batch',
    {
      config: {
        calls: {
          of: (body: JudgeBatchRequest) => body.requests.map(judgeCall),
          problem: batchProblem,
          batch: true,
          at: (index: number) => `requests/${index}`
        }
      },
      schema: {
        operationId: 'judgeBatch',
        summary: 'Judge many programs; results in order, or streamed as NDJSON {index, result} lines as each finishes',
        tags: ['judge'],
        body: schemas.judgeBatchRequest,
        response: {
          200: {
            description:
              'JSON: {results} in request order. With Accept: application/x-ndjson: one JudgeBatchStreamLine per judge, as each finishes',
            content: {
              'application/json': { schema: schemas.judgeBatchResponse },
              [NDJSON]: { schema: schemas.judgeBatchStreamLine }
            }
          },
          ...errors
        }
      }
    },
    async (request, reply) => {
      const context = request.callContext
      const accept = request.headers.accept
      if (typeof accept === 'string' && accept.includes(NDJSON)) {
        const lines = new NdjsonWriter()
        void router
          .judgeBatch(request.body.requests, context, (index, result) => lines.push({ index, result }))
          .then(() => {
            lines.end()
          })
        return reply.type(NDJSON).send(lines.stream)
      }
      return { results: await router.judgeBatch(request.body.requests, context) }
    }
  )
}
