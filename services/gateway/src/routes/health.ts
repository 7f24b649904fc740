/** `GET /healthz` (the process answers) and `GET /readyz` (a runner is ready to take calls). */
import type { FastifyInstance } from 'fastify'
import { RUNNER_STATES } from '@sandfleet/protocol'
import type { RunnerSet } from '../runners/runner-set.ts'

const readiness = {
  title: 'Readiness',
  type: 'object',
  additionalProperties: false,
  required: ['status', 'runners'],
  properties: {
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    runners: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['runner', 'up', 'state'],
        properties: {
          runner: { type: 'string', description: "The runner's id" },
          up: { type: 'boolean', description: 'Its last load poll answered' },
          state: {
            type: 'string',
            enum: [...RUNNER_STATES, 'unknown'],
            description: 'What it last reported (unknown: never answered)'
          }
        }
      }
    }
  }
}

/** Registers both routes. */
export function healthRoutes(app: FastifyInstance, set: RunnerSet): void {
  const tags = ['operations']
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'healthz',
        summary: 'Liveness: the process answers',
        tags,
        response: {
          200: {
            description: 'Alive',
            type: 'object',
            additionalProperties: false,
            required: ['status'],
            properties: { status: { type: 'string', enum: ['ok'] } }
          }
        }
      }
    },
    async () => ({ status: 'ok' })
  )
  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'readyz',
        summary: 'Readiness: at least one runner reported ready',
        tags,
        response: {
          200: { description: 'Ready, and each runner', ...readiness },
          503: { description: 'No runner is ready', ...readiness }
        }
      }
    },
    async (_request, reply) => {
      const runners = set.members.map((m) => ({ runner: m.id, up: m.up, state: m.load?.state ?? 'unknown' }))
      const ready = set.ready()
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', runners })
    }
  )
}
