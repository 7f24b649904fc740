/** `GET /docs` (and `/docs/json`): the OpenAPI 3 document, generated from the route schemas. */
import type { FastifyInstance } from 'fastify'

/** Registers the routes; `@fastify/swagger` must be registered on `app` first. */
export function docsRoutes (app: FastifyInstance): void {
  let doc: unknown
  const handler = async (): Promise<unknown> => (doc ??= app.swagger())
  const schema = { hide: true }
  app.get('/docs', { schema }, handler)
  app.get('/docs/json', { schema }, handler)
}
