/** `GET /healthz` (the process answers) and `GET /readyz` (a runner is ready to take calls). */
import type { FastifyInstance } from 'fastify'
import type { RunnerSet } from '../runners/runner-set.ts'

/** Registers both routes. */
export function healthRoutes (app: FastifyInstance, set: RunnerSet): void {
  app.get('/healthz', { schema: { summary: 'Liveness', tags: ['operations'] } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { summary: 'Readiness: at least one runner reported ready', tags: ['operations'] } }, async (_request, reply) => {
    const runners = set.members.map((m) => ({ runner: m.id, up: m.up, state: m.load?.state ?? 'unknown' }))
    const ready = set.ready()
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', runners })
  })
}
