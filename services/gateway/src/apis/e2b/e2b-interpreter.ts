/**
 * The code interpreter of an E2B sandbox (port 49999): `POST /execute` runs code in a code context of the sandbox
 * and answers E2B's stream of lines as the run goes (`e2b-execution.ts`: its output as it is printed, its results,
 * error and end when it ends); `/contexts` makes, lists, restarts and removes code contexts (`python`,
 * `javascript`). Bad input is FastAPI's 422 (the interpreter is a FastAPI server); its other refusals are plain text,
 * as its own are.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { ContextLanguage, SandboxRun } from '@sandfleet/protocol'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import { modelBody, validateModel, type ModelSpec } from '../fastapi/fastapi-errors.ts'
import { ExecutionAnswer } from './e2b-execution.ts'
import { answerRefusal, envOf, sandboxRef, type SandboxServer } from './e2b-sandbox-url.ts'
import { INTERPRETER_PORT } from './e2b-shapes.ts'

const EXECUTE: ModelSpec = {
  code: { kind: 'string', required: true },
  context_id: { kind: 'string', nullable: true },
  language: { kind: 'string', nullable: true },
  env_vars: { kind: 'string_map', nullable: true }
}
const CONTEXT: ModelSpec = {
  language: { kind: 'string', nullable: true },
  cwd: { kind: 'string', nullable: true }
}

/** A language as the interpreter names it (`js` is `javascript`); undefined for one sandfleet does not run. */
export function languageOf(language: string | null | undefined): ContextLanguage | undefined {
  const l = (language ?? 'python').trim().toLowerCase()
  if (l === '' || l === 'python') return 'python'
  if (l === 'javascript' || l === 'js') return 'javascript'
  return undefined
}

/** Registers the interpreter's routes on the sandbox URL. */
export function interpreterRoutes(app: FastifyInstance, sandboxes: FleetSandboxes, maxTimeoutMs: number): void {
  const route = (tokenless: boolean) => ({
    constraints: { e2bSandboxPort: INTERPRETER_PORT },
    config: { ownAuth: true, e2bSandbox: { server: 'interpreter' as SandboxServer, tokenless } },
    schema: { hide: true }
  })
  const plain = (reply: FastifyReply, code: number, text: string): FastifyReply =>
    reply.code(code).type('text/plain; charset=utf-8').send(text)
  /** The refusal of a language `languageOf` does not know. */
  const unknownLanguage = (reply: FastifyReply, given: string | null | undefined): FastifyReply =>
    plain(reply, 400, `language ${JSON.stringify(given)} is not one sandfleet runs: python, javascript`)

  app.post(
    '/execute',
    {
      ...route(false),
      preValidation: modelBody((body) => validateModel(body, EXECUTE)),
      config: {
        ...route(false).config,
        calls: { of: (body: { code: string }) => [{ code: body.code, timeout_ms: maxTimeoutMs }] }
      }
    },
    async (request, reply) => {
      const body = request.body as { code: string; context_id?: string | null; language?: string | null }
      const env = envOf((request.body as { env_vars?: unknown }).env_vars, 'env_vars')
      if (typeof body.context_id === 'string' && typeof body.language === 'string')
        return plain(reply, 400, 'Only one of context_id or language can be provided')
      const language = languageOf(body.language)
      if (language === undefined) return unknownLanguage(reply, body.language)
      const { id, auth } = sandboxRef(request)
      const answer = new ExecutionAnswer(reply)
      let run: SandboxRun | undefined
      try {
        await sandboxes.stream(
          id,
          auth,
          {
            op: 'run',
            code: body.code,
            ...(typeof body.context_id === 'string' ? { context: body.context_id } : { language }),
            ...(env === undefined ? {} : { env }),
            timeout_ms: maxTimeoutMs
          },
          (event) => {
            if (event.event === 'ran') run = event.run
            else answer.event(event)
          },
          request.callContext.signal
        )
      } catch (err) {
        if (answer.started) return answer.failed(err instanceof Error ? err.message : String(err))
        answer.abandon()
        if ((err as { code?: unknown }).code === 'SF_ERR_SANDBOX_CONTEXT_NOT_FOUND')
          return plain(reply, 404, `Context ${String(body.context_id)} not found`)
        return answerRefusal(request, reply, err)
      }
      // no run: its caller went away (the stream stopped with its signal)
      if (run === undefined) {
        if (answer.started) return answer.failed('the run was abandoned: its caller went away')
        answer.abandon()
        return plain(reply, 503, 'the run was abandoned: its caller went away')
      }
      return await answer.ended(run, (code, text) => plain(reply, code, text))
    }
  )

  app.post(
    '/contexts',
    {
      ...route(true),
      preValidation: modelBody((body) => validateModel(body ?? {}, CONTEXT)),
      config: { ...route(true).config, calls: { of: () => [] } }
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as { language?: string | null; cwd?: string | null }
      const language = languageOf(body.language)
      if (language === undefined) return unknownLanguage(reply, body.language)
      const { id, auth } = sandboxRef(request)
      try {
        return await sandboxes.call(id, auth, {
          op: 'context_create',
          language,
          ...(typeof body.cwd === 'string' && body.cwd !== '' ? { cwd: body.cwd } : {})
        })
      } catch (err) {
        if ((err as { code?: unknown }).code === 'SF_ERR_SANDBOX_UNSUPPORTED')
          return plain(reply, 400, (err as Error).message)
        return answerRefusal(request, reply, err)
      }
    }
  )

  app.get('/contexts', route(true), async (request, reply) => {
    const { id, auth } = sandboxRef(request)
    try {
      return (await sandboxes.call(id, auth, { op: 'context_list' })).contexts
    } catch (err) {
      return answerRefusal(request, reply, err)
    }
  })

  const onContext = async (
    op: 'context_restart' | 'context_remove',
    context: string,
    request: Parameters<typeof sandboxRef>[0],
    reply: FastifyReply
  ): Promise<FastifyReply> => {
    const { id, auth } = sandboxRef(request)
    try {
      await sandboxes.call(id, auth, { op, context })
      return await reply.code(200).type('application/json').send('null')
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SF_ERR_SANDBOX_CONTEXT_NOT_FOUND')
        return plain(reply, 404, `Context ${context} not found`)
      return answerRefusal(request, reply, err)
    }
  }
  app.post<{ Params: { contextId: string } }>(
    '/contexts/:contextId/restart',
    { ...route(true), config: { ...route(true).config, calls: { of: () => [] } } },
    async (request, reply) => await onContext('context_restart', request.params.contextId, request, reply)
  )
  app.delete<{ Params: { contextId: string } }>(
    '/contexts/:contextId',
    route(true),
    async (request, reply) => await onContext('context_remove', request.params.contextId, request, reply)
  )
}
