/**
 * The API description: the OpenAPI 3.1 document `@fastify/swagger` generates from the route
 * schemas, served at `GET /openapi.json`, and a page that browses it at `GET /docs` (one
 * self-contained HTML file: it works with no network). `/docs/json`, its former address,
 * redirects to the document.
 */
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import type { Api } from '../apis/api.ts'
import { isOpenPath } from '../plugins/auth.ts'
import { DOCS_PAGE } from './docs-page.ts'
import { hoistTitledSchemas } from './openapi-components.ts'

const API_KEY_NOTE =
  'The API key of the gateway (SANDFLEET_API_KEYS), as `Authorization: Bearer KEY` or as `x-api-key: KEY`.'

/** The header every 429 of the API key's quotas and of the gateway's admission carries. */
const RETRY_AFTER = { 'retry-after': { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying' } }

type ResponseMap = Record<string, Record<string, unknown>>

/**
 * The responses of a route with its 429 described: every POST passes the API key's quotas (and
 * those that run code the gateway's admission), refused with `Retry-After`. A route's own 429
 * gets the header; otherwise its 4xx body, as a 429.
 */
function withRetryAfter(method: string | string[], response: ResponseMap | undefined): ResponseMap | undefined {
  const base = response?.['429'] ?? response?.['4xx']
  if (
    response === undefined ||
    base === undefined ||
    !(method === 'POST' || (Array.isArray(method) && method.includes('POST')))
  )
    return response
  const description =
    response['429'] !== undefined
      ? base.description
      : "The API key's quota or the gateway's admission refused the call; Retry-After says when to retry"
  return { ...response, 429: { ...base, description, headers: RETRY_AFTER } }
}

/** The APIs that speak another service's, as the description names them: "A's, B's and C". */
function spoken(apis: readonly Api[]): string {
  const names = apis.flatMap((api) => (api.imitates === undefined ? [] : [api.imitates]))
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`
}

/**
 * `@fastify/swagger`'s options: the document's info, the two ways to present an API key, each
 * route's security (none on probes, metrics and the description; a key on every other route
 * when the gateway has keys, optional when it has none), and named schemas as components.
 */
export function openApiOptions(apiKeysConfigured: boolean, apis: readonly Api[]): FastifyDynamicSwaggerOptions {
  const key = [{ bearer: [] }, { apiKey: [] }]
  const security = apiKeysConfigured ? key : [{}, ...key]
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'sandfleet',
        version: '0.1.0',
        description:
          'Sandboxed code execution for agentic RL: one tool call from HTTP to a warm, isolated sandbox and back. ' +
          `Beside its own API (execute, sessions), the gateway speaks ${spoken(apis)}, each with its own field names and error shapes.` +
          (apiKeysConfigured ? '' : ' This gateway has no API keys configured: calls need none.')
      },
      tags: [
        ...apis.flatMap((api) => api.tags),
        { name: 'operations', description: 'Probes, metrics, what the fleet runs, this description' }
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: API_KEY_NOTE },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: API_KEY_NOTE }
        }
      }
    },
    transform: ({ schema, url, route }) => {
      const response = withRetryAfter(route.method, schema?.response as ResponseMap | undefined)
      return {
        schema: {
          ...schema,
          ...(response === undefined ? {} : { response }),
          security: isOpenPath(url) ? [] : security
        } as typeof schema,
        url
      }
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? hoistTitledSchemas(document.openapiObject as Record<string, unknown>)
        : document.swaggerObject
  }
}

/** Registers the routes; `@fastify/swagger` must be registered on `app` with {@link openApiOptions} first. */
export function docsRoutes(app: FastifyInstance): void {
  let text: string | undefined
  const tags = ['operations']
  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'openapi',
        summary: 'This OpenAPI 3.1 document',
        tags,
        response: {
          200: {
            description: 'The document',
            content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } }
          }
        }
      }
    },
    async (_request, reply) => await reply.type('application/json').send((text ??= JSON.stringify(app.swagger())))
  )
  app.get(
    '/docs',
    {
      schema: {
        operationId: 'docs',
        summary: 'A page browsing this document, with a form to try each operation',
        tags,
        response: {
          200: {
            description: 'The page (self-contained: no network)',
            content: { 'text/html': { schema: { type: 'string' } } }
          }
        }
      }
    },
    async (_request, reply) => await reply.type('text/html; charset=utf-8').send(DOCS_PAGE)
  )
  app.get(
    '/docs/json',
    {
      schema: {
        operationId: 'docsJson',
        summary: 'The former address of the document: redirects to /openapi.json',
        deprecated: true,
        tags,
        response: { 301: { description: 'Moved to /openapi.json', type: 'null' } }
      }
    },
    async (_request, reply) => await reply.redirect('../openapi.json', 301)
  )
}
