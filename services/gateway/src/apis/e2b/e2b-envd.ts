/**
 * envd of an E2B sandbox (port 49983): `GET /health`, and `GET`/`POST /files` (a file's bytes; an upload as
 * `multipart/form-data`, or `application/octet-stream`, gzip or not), answered as envd answers (its error body
 * `{code, message}`). Its Connect services are e2b-rpc.ts'. A path is the sandbox's: relative to its home
 * (/home/user) or absolute; what is written must lie in the sandbox's writable places.
 */
import { gunzipSync } from 'node:zlib'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { SandboxEntry } from '@sandfleet/protocol'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import { answerRefusal, sandboxRef, type SandboxServer } from './e2b-sandbox-url.ts'
import { ENVD_PORT } from './e2b-shapes.ts'
import { boundaryOf, parseForm } from './multipart.ts'

/** An upload's answer item (envd's `EntryInfo` of a file written). */
function written(entry: SandboxEntry): { name: string; type: 'file'; path: string } {
  return { name: entry.name, type: 'file', path: entry.path }
}

/** The files of an upload: each path and its bytes. */
function uploads(request: FastifyRequest, path: string | undefined): Array<{ path: string; data: Buffer }> {
  const type = String(request.headers['content-type'] ?? '')
  let body = request.body instanceof Buffer ? request.body : Buffer.alloc(0)
  if (String(request.headers['content-encoding'] ?? '').toLowerCase() === 'gzip') body = gunzipSync(body)
  if (type.startsWith('multipart/form-data')) {
    const boundary = boundaryOf(type)
    if (boundary === undefined) throw badInput('the multipart body names no boundary')
    const files = parseForm(body, boundary).filter((p) => p.name === 'file')
    if (files.length === 0) throw badInput('the form holds no "file" part')
    return files.map((part) => {
      const to = path ?? part.filename
      if (to === undefined || to === '') throw badInput("path: a file needs a path (the query, or its part's filename)")
      return { path: to, data: part.data }
    })
  }
  if (type.startsWith('application/octet-stream')) {
    if (path === undefined) throw badInput('path: an octet-stream upload needs the path query')
    return [{ path, data: body }]
  }
  throw Object.assign(
    new Error(`content-type ${type || '(none)'}: upload multipart/form-data or application/octet-stream`),
    {
      statusCode: 415
    }
  )
}

const badInput = (message: string): Error => Object.assign(new Error(message), { statusCode: 400 })

/** Registers envd's HTTP routes on the sandbox URL. */
export function envdRoutes(app: FastifyInstance, sandboxes: FleetSandboxes): void {
  const route = {
    constraints: { e2bSandboxPort: ENVD_PORT },
    config: { ownAuth: true, e2bSandbox: { server: 'envd' as SandboxServer } },
    schema: { hide: true }
  }
  const pathOf = (request: FastifyRequest): string | undefined => {
    const path = (request.query as { path?: unknown }).path
    return typeof path === 'string' && path !== '' ? path : undefined
  }

  // asked of the sandbox's runner each time (the token's owner may be remembered from before it was killed)
  app.get('/health', route, async (request, reply) => {
    const { id, auth } = sandboxRef(request)
    try {
      await sandboxes.call(id, auth, { op: 'info' })
      return await reply.code(204).send()
    } catch (err) {
      return answerRefusal(request, reply, err)
    }
  })

  app.get('/files', route, async (request, reply) => {
    const { id, auth } = sandboxRef(request)
    try {
      const { data } = await sandboxes.call(id, auth, { op: 'read', path: pathOf(request) ?? '' })
      const bytes = Buffer.from(data, 'base64')
      return await reply.code(200).type('application/octet-stream').header('content-length', bytes.length).send(bytes)
    } catch (err) {
      return answerRefusal(request, reply, err)
    }
  })

  app.post('/files', { ...route, config: { ...route.config, calls: { of: () => [] } } }, async (request, reply) => {
    const { id, auth } = sandboxRef(request)
    try {
      const out = []
      for (const file of uploads(request, pathOf(request))) {
        const { entry } = await sandboxes.call(id, auth, {
          op: 'write',
          path: file.path,
          data: file.data.toString('base64')
        })
        out.push(written(entry))
      }
      return out
    } catch (err) {
      return answerRefusal(request, reply, err)
    }
  })
}

/** The body parsers of envd's uploads and the Connect streams: their bytes, as they came (bounded by `bodyLimit`). */
export function installRawBodies(app: FastifyInstance): void {
  for (const type of ['multipart/form-data', 'application/octet-stream', 'application/connect+json'])
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, body, done) => {
      done(null, body)
    })
}
