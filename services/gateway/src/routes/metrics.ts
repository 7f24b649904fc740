/** `GET /metrics`: Prometheus text of the gateway's registry and any merged in (the local runner's). */
import type { FastifyInstance } from 'fastify'
import { Registry } from 'prom-client'

/** Registers the route; `registries` are scraped together at each request. */
export function metricsRoute(app: FastifyInstance, registries: Registry[]): void {
  const merged = registries.length === 1 ? registries[0] : Registry.merge(registries)
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'metrics',
        summary: "Prometheus metrics: the gateway's, and the local runner's in `sandfleet serve`",
        tags: ['operations'],
        response: {
          200: { description: 'Prometheus text exposition', content: { 'text/plain': { schema: { type: 'string' } } } }
        }
      }
    },
    async (_request, reply) => {
      const text = await merged.metrics()
      return reply.type(merged.contentType).send(text)
    }
  )
}
