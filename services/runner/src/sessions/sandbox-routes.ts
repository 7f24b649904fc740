/**
 * The runner's internal sandbox API, which gateways call (paths in `RUNNER_SANDBOX_PATHS`):
 *
 * - `POST /v1/sandboxes` (SandboxCreateRequest) → 201 SandboxInfo (with its token)
 * - `GET /v1/sandboxes` → the caller's key's SandboxInfo[]
 * - `POST /v1/sandboxes/:id/call` (a SandboxCall) → its answer
 * - `POST /v1/sandboxes/:id/stream` (a SandboxStreamCall) → NDJSON: one event a line (a process's SandboxEvent, a
 *   run's SandboxRunEvent); a refusal after the first event is a last line {@link SandboxStreamRefusal}: the
 *   ErrorBody it would have answered before the first event, and that answer's HTTP status in `http_status`
 *
 * Who calls: `x-sandfleet-sandbox-auth: key` and the key digest in `x-sandfleet-key` (as sessions), or
 * `x-sandfleet-sandbox-auth: token` and the sandbox's token in `x-sandfleet-sandbox-token` (absent: no token). A
 * refusal is its HTTP status with an ErrorBody (`SF_ERR_SESSION_…`, `SF_ERR_SANDBOX_…`).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  NDJSON,
  callContext,
  RUNNER_HEADERS,
  RUNNER_SANDBOX_PATHS,
  SANDBOX_AUTH_HEADER,
  SANDBOX_TOKEN_HEADER,
  SandboxCreateRequestSchema,
  type SandboxAuth,
  type SandboxCall,
  type SandboxCreateRequest,
  type SandboxStreamCall,
  type SandboxStreamRefusal
} from '@sandfleet/protocol'
import { callerSignal, NdjsonWriter, RegisteredError } from '@sandfleet/protocol/http'
import { RunnerError, SessionError } from '../errors.ts'
import type { SessionSandboxes } from './session-sandboxes.ts'
import { answer } from './session-routes.ts'

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/** The caller of a request: its token when it says so, else its key digest ('' without one). */
function authOf(request: FastifyRequest): SandboxAuth {
  if (header(request, SANDBOX_AUTH_HEADER) === 'token') return { token: header(request, SANDBOX_TOKEN_HEADER) }
  return { key: header(request, RUNNER_HEADERS.sessionKey) ?? '' }
}

const keyOf = (request: FastifyRequest): string => header(request, RUNNER_HEADERS.sessionKey) ?? ''

/**
 * The last line of a stream refused after its first event: what the refusal would have answered before the stream
 * began (an error of no registry: the edge's 500 `SF_ERR_RUNNER_INTERNAL`).
 */
export function streamRefusal(err: unknown): SandboxStreamRefusal {
  const error = err instanceof RegisteredError ? err : new RunnerError('SF_ERR_RUNNER_INTERNAL', 'internal error')
  return { http_status: error.statusCode, ...error.toBody() }
}

const OP = { type: 'object', required: ['op'], properties: { op: { type: 'string', maxLength: 64 } } }
const PARAMS = {
  type: 'object',
  properties: { id: { type: 'string', minLength: 1, maxLength: 512 } },
  required: ['id']
}

/** Registers the sandbox routes on the runner's app; `sandboxes` undefined answers 501 to each. */
export function sandboxRoutes(app: FastifyInstance, sandboxes: () => SessionSandboxes | undefined): void {
  const held = (): SessionSandboxes => {
    const s = sandboxes()
    if (s === undefined) throw new SessionError('SF_ERR_SESSION_DISABLED')
    return s
  }

  app.post<{ Body: SandboxCreateRequest }>(
    RUNNER_SANDBOX_PATHS.all,
    { schema: { body: SandboxCreateRequestSchema } },
    async (request, reply) =>
      await answer(reply, async () => await reply.code(201).send(await held().create(request.body, keyOf(request))))
  )

  app.get(RUNNER_SANDBOX_PATHS.all, async (request, reply) => await answer(reply, () => held().list(keyOf(request))))

  app.post<{ Params: { id: string }; Body: SandboxCall }>(
    RUNNER_SANDBOX_PATHS.call,
    { schema: { params: PARAMS, body: OP } },
    async (request, reply) =>
      await answer(
        reply,
        async () =>
          await held().call(
            request.params.id,
            authOf(request),
            request.body,
            callContext({ signal: callerSignal(reply.raw), requestId: request.id })
          )
      )
  )

  app.post<{ Params: { id: string }; Body: SandboxStreamCall }>(
    RUNNER_SANDBOX_PATHS.stream,
    { schema: { params: PARAMS, body: OP } },
    async (request, reply) => {
      const lines = new NdjsonWriter()
      const signal = callerSignal(reply.raw)
      let started = false
      return await answer(reply, async () => {
        const first = new Promise<void>((resolve, reject) => {
          held()
            .stream(
              request.params.id,
              authOf(request),
              request.body,
              (event) => {
                lines.push(event)
                if (!started) {
                  started = true
                  resolve()
                }
              },
              signal
            )
            .then(
              () => {
                lines.end()
                if (!started) {
                  started = true
                  resolve()
                }
              },
              (err: unknown) => {
                if (!started) reject(err)
                else {
                  if (!(err instanceof RegisteredError)) request.log.error({ err }, 'sandbox stream failed')
                  lines.push(streamRefusal(err))
                  lines.end()
                }
              }
            )
        })
        await first
        return await reply.header('content-type', NDJSON).send(lines.stream)
      })
    }
  )
}
