/**
 * E2B's API URL (the sandbox lifecycle, `X-API-Key`): create `POST /v2/sandboxes`, list `GET /v2/sandboxes`, info
 * `GET /sandboxes/{id}`, kill `DELETE /sandboxes/{id}`, timeout `POST /sandboxes/{id}/timeout`, connect
 * `POST /v2/sandboxes/{id}/connect`; pause `POST /sandboxes/{id}/pause` is refused (no memory snapshots). A sandbox
 * is the API key's (its digest, `callerKey`): another key's is not found. Every POST takes the key's quota.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { SANDBOX_LIMITS, type SandboxCreateRequest, type SandboxInfo } from '@sandfleet/protocol'
import { callerKey } from '../../plugins/auth.ts'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import {
  E2B_ERRORS,
  E2bConnectSchema,
  E2bListedSandboxSchema,
  E2bNewSandboxSchema,
  E2bSandboxDetailSchema,
  E2bSandboxSchema,
  E2bTimeoutSchema
} from './e2b-schemas.ts'
import { E2B_TEMPLATES, sandboxCreated, sandboxDetail, sandboxListed } from './e2b-shapes.ts'

/** E2B's default life of a sandbox whose create names none, in seconds. */
const DEFAULT_TIMEOUT_S = 15
/** Most sandboxes a list page holds (E2B's). */
const MAX_PAGE = 100

const isStrings = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  Object.values(v).every((x) => typeof x === 'string') &&
  Object.keys(v).length <= SANDBOX_LIMITS.maxLabels
const isTimeout = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= SANDBOX_LIMITS.maxTimeoutS

/** A 400 in E2B's shape. */
class BadInput extends Error {
  readonly statusCode = 400
}

/** A `POST /v2/sandboxes` body as the runner's create, or the 400 naming its field. */
export function createRequestOf(body: unknown): SandboxCreateRequest {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  if (typeof b.templateID !== 'string' || b.templateID === '') throw new BadInput('templateID: a template is required')
  if (!E2B_TEMPLATES.includes(b.templateID))
    throw new BadInput(
      `templateID: template '${b.templateID}' is not one sandfleet makes (${E2B_TEMPLATES.join(', ')}: the Python sandbox; custom templates are not supported)`
    )
  if (b.timeout !== undefined && !isTimeout(b.timeout))
    throw new BadInput(`timeout: seconds, a whole number from 0 to ${SANDBOX_LIMITS.maxTimeoutS}`)
  if (b.metadata !== undefined && b.metadata !== null && !isStrings(b.metadata))
    throw new BadInput(`metadata: string values, at most ${SANDBOX_LIMITS.maxLabels}`)
  if (b.envVars !== undefined && b.envVars !== null && !isStrings(b.envVars))
    throw new BadInput(`envVars: string values, at most ${SANDBOX_LIMITS.maxLabels}`)
  if (b.autoPause === true) throw new BadInput('autoPause: sandfleet does not pause sandboxes (no memory snapshots)')
  if (typeof b.autoResume === 'object' && (b.autoResume as { enabled?: unknown } | null)?.enabled === true)
    throw new BadInput('autoResume: sandfleet does not pause sandboxes (no memory snapshots)')
  if (b.allow_internet_access === true || (b.network !== undefined && b.network !== null))
    throw new BadInput(`${b.network === undefined ? 'allow_internet_access' : 'network'}: sandboxes have no network`)
  if (b.mcp !== undefined && b.mcp !== null) throw new BadInput('mcp: MCP servers in sandboxes are not supported')
  if (Array.isArray(b.volumeMounts) && b.volumeMounts.length > 0)
    throw new BadInput('volumeMounts: volumes are not supported')
  return {
    template: b.templateID,
    timeout_s: (b.timeout as number | undefined) ?? DEFAULT_TIMEOUT_S,
    labels: (b.metadata as Record<string, string> | undefined) ?? {},
    env: (b.envVars as Record<string, string> | undefined) ?? {}
  }
}

/** The `metadata` filter of a list (`k=v&k2=v2`, each part URL-encoded), as pairs. */
function metadataFilter(query: unknown): Array<[string, string]> {
  if (typeof query !== 'string' || query === '') return []
  return [...new URLSearchParams(query)].map(([k, v]) => [decodeURIComponent(k), decodeURIComponent(v)])
}

/** Registers the API URL's routes; `sandboxes` reaches the fleet's. */
export function lifecycleRoutes(app: FastifyInstance, sandboxes: FleetSandboxes): void {
  const tags = ['E2B']
  const idParams = {
    type: 'object',
    properties: { sandboxID: { type: 'string', minLength: 1, maxLength: 512 } },
    required: ['sandboxID']
  }
  // every POST takes the key's quota (one call); none runs code itself
  const oneCall = { calls: { of: () => [] } }
  const infoOf = async (request: FastifyRequest<{ Params: { sandboxID: string } }>): Promise<SandboxInfo> =>
    await sandboxes.call(request.params.sandboxID, { key: callerKey(request) }, { op: 'info' })

  app.post(
    '/v2/sandboxes',
    {
      config: oneCall,
      schema: {
        operationId: 'e2bCreateSandbox',
        summary: 'E2B: create a sandbox (a session of the Python sandbox) from a template',
        tags,
        body: E2bNewSandboxSchema,
        response: { 201: { description: 'Made', ...E2bSandboxSchema }, ...E2B_ERRORS }
      }
    },
    async (request, reply) => {
      const info = await sandboxes.create(createRequestOf(request.body), callerKey(request))
      return await reply.code(201).send(sandboxCreated(info))
    }
  )

  app.get<{ Querystring: Record<string, string | undefined> }>(
    '/v2/sandboxes',
    {
      schema: {
        operationId: 'e2bListSandboxes',
        summary: "E2B: the API key's sandboxes (metadata, state, limit, nextToken)",
        tags,
        querystring: {
          type: 'object',
          properties: {
            metadata: { type: 'string' },
            state: { type: 'string' },
            limit: { type: 'string' },
            nextToken: { type: 'string' }
          }
        },
        response: {
          200: { description: 'One page; x-next-token names the next', type: 'array', items: E2bListedSandboxSchema },
          ...E2B_ERRORS
        }
      }
    },
    async (request, reply) => {
      const { metadata, state, limit, nextToken } = request.query
      const states = (state ?? 'running,paused').split(',')
      const size = limit === undefined ? MAX_PAGE : Number(limit)
      const from = nextToken === undefined ? 0 : Number(Buffer.from(nextToken, 'base64url').toString())
      if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE)
        throw new BadInput(`limit: a whole number from 1 to ${MAX_PAGE}`)
      if (!Number.isInteger(from) || from < 0) throw new BadInput('nextToken: not one this API gave')
      const wanted = metadataFilter(metadata)
      const all = states.includes('running')
        ? (await sandboxes.list(callerKey(request)))
            .filter((s) => wanted.every(([k, v]) => s.labels[k] === v))
            .sort((a, b) => a.started_at.localeCompare(b.started_at) || a.sandbox_id.localeCompare(b.sandbox_id))
        : []
      if (from + size < all.length)
        void reply.header('x-next-token', Buffer.from(String(from + size)).toString('base64url'))
      return all.slice(from, from + size).map(sandboxListed)
    }
  )

  app.get<{ Params: { sandboxID: string } }>(
    '/sandboxes/:sandboxID',
    {
      schema: {
        operationId: 'e2bGetSandbox',
        summary: "E2B: a sandbox's info",
        tags,
        params: idParams,
        response: { 200: { description: 'Its info', ...E2bSandboxDetailSchema }, ...E2B_ERRORS }
      }
    },
    async (request) => sandboxDetail(await infoOf(request))
  )

  app.delete<{ Params: { sandboxID: string } }>(
    '/sandboxes/:sandboxID',
    {
      schema: {
        operationId: 'e2bKillSandbox',
        summary: 'E2B: kill a sandbox',
        tags,
        params: idParams,
        response: { 204: { description: 'Killed', type: 'null' }, ...E2B_ERRORS }
      }
    },
    async (request, reply) => {
      await sandboxes.call(request.params.sandboxID, { key: callerKey(request) }, { op: 'kill' })
      return await reply.code(204).send()
    }
  )

  app.post<{ Params: { sandboxID: string } }>(
    '/sandboxes/:sandboxID/timeout',
    {
      config: oneCall,
      schema: {
        operationId: 'e2bSetSandboxTimeout',
        summary: 'E2B: the sandbox lives this many seconds from now',
        tags,
        params: idParams,
        body: E2bTimeoutSchema,
        response: { 204: { description: 'Set', type: 'null' }, ...E2B_ERRORS }
      }
    },
    async (request, reply) => {
      const timeout = (request.body as { timeout?: unknown } | undefined)?.timeout
      if (!isTimeout(timeout))
        throw new BadInput(`timeout: seconds, a whole number from 0 to ${SANDBOX_LIMITS.maxTimeoutS}`)
      await sandboxes.call(
        request.params.sandboxID,
        { key: callerKey(request) },
        { op: 'set_timeout', timeout_s: timeout }
      )
      return await reply.code(204).send()
    }
  )

  const connect = async (request: FastifyRequest<{ Params: { sandboxID: string } }>, reply: FastifyReply) => {
    const timeout = (request.body as { timeout?: unknown } | undefined)?.timeout
    if (timeout !== undefined && !isTimeout(timeout))
      throw new BadInput(`timeout: seconds, a whole number from 0 to ${SANDBOX_LIMITS.maxTimeoutS}`)
    let info = await infoOf(request)
    // a running sandbox lives at least `timeout` from now: its end moves later, never sooner
    if (timeout !== undefined && Date.parse(info.end_at) < Date.now() + timeout * 1000)
      info = await sandboxes.call(
        request.params.sandboxID,
        { key: callerKey(request) },
        { op: 'set_timeout', timeout_s: timeout }
      )
    return await reply.code(200).send(sandboxCreated(info))
  }
  for (const [path, operationId] of [
    ['/v2/sandboxes/:sandboxID/connect', 'e2bConnectSandbox'],
    ['/sandboxes/:sandboxID/connect', 'e2bConnectSandboxV1']
  ] as const)
    app.post<{ Params: { sandboxID: string } }>(
      path,
      {
        config: oneCall,
        schema: {
          operationId,
          summary: 'E2B: meet a running sandbox again (its token), living at least `timeout` more seconds',
          tags,
          params: idParams,
          body: E2bConnectSchema,
          response: { 200: { description: 'Running', ...E2bSandboxSchema }, ...E2B_ERRORS }
        }
      },
      connect
    )

  app.post<{ Params: { sandboxID: string } }>(
    '/sandboxes/:sandboxID/pause',
    {
      config: oneCall,
      schema: {
        operationId: 'e2bPauseSandbox',
        summary: 'E2B: pause a sandbox — refused: sandfleet keeps no memory snapshots',
        tags,
        params: idParams,
        response: { ...E2B_ERRORS }
      }
    },
    async (request, reply) => {
      await infoOf(request) // another key's, or gone: 404 first
      return await reply
        .code(501)
        .send({ code: 501, message: 'pause is not supported: sandfleet keeps no memory snapshots of sandboxes' })
    }
  )
}

export { BadInput }
