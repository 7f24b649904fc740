/**
 * The code interpreter of an E2B sandbox (port 49999): `POST /execute` runs code in a code context of the sandbox
 * and answers E2B's stream of lines (`number_of_executions`, `stdout`, `stderr`, each `result` with its formats,
 * `error` with name, value and traceback, `end_of_execution`); `/contexts` makes, lists, restarts and removes code
 * contexts (`python`, `javascript`). Bad input is FastAPI's 422 (the interpreter is a FastAPI server); its other
 * refusals are plain text, as its own are.
 *
 * A run's lines are written when it ends; one that takes longer than {@link HEAD_AFTER_MS} gets its answer's head
 * then, and a keep-alive line every {@link KEEPALIVE_MS} (so no client or proxy between takes it for idle).
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { ContextLanguage, SandboxRun } from '@sandfleet/protocol'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import { modelBody, validateModel, type ModelSpec } from '../fastapi/fastapi-errors.ts'
import { answerRefusal, envOf, sandboxRef, type SandboxServer } from './e2b-sandbox-url.ts'
import { INTERPRETER_PORT } from './e2b-shapes.ts'

const HEAD_AFTER_MS = 500
const KEEPALIVE_MS = 30_000

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

/** A display's MIME types as the fields of E2B's result. */
const FORMATS: Readonly<Record<string, string>> = Object.freeze({
  'text/plain': 'text',
  'text/html': 'html',
  'text/markdown': 'markdown',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'application/pdf': 'pdf',
  'text/latex': 'latex',
  'application/json': 'json',
  'application/javascript': 'javascript'
})

/** A language as the interpreter names it (`js` is `javascript`); undefined for one sandfleet does not run. */
export function languageOf(language: string | null | undefined): ContextLanguage | undefined {
  const l = (language ?? 'python').trim().toLowerCase()
  if (l === '' || l === 'python') return 'python'
  if (l === 'javascript' || l === 'js') return 'javascript'
  return undefined
}

/** One display as E2B's result line. */
function resultLine(data: Record<string, string>, main: boolean): Record<string, unknown> {
  const line: Record<string, unknown> = { type: 'result' }
  const extra: Record<string, string> = {}
  for (const [mime, value] of Object.entries(data)) {
    const field = FORMATS[mime]
    if (field === undefined) extra[mime] = value
    else if (field === 'json') {
      try {
        line.json = JSON.parse(value)
      } catch {
        line.json = value
      }
    } else line[field] = value
  }
  // a string's repr, shown as the interpreter shows its text: without the quotes
  const text = line.text
  if (typeof text === 'string' && text.length >= 2 && text.startsWith("'") && text.endsWith("'"))
    line.text = text.slice(1, -1)
  if (Object.keys(extra).length > 0) line.extra = extra
  line.is_main_result = main
  return line
}

/** The lines of a run, as the interpreter streams them. */
export function executionLines(run: SandboxRun): Array<Record<string, unknown>> {
  const { result } = run
  const at = new Date().toISOString()
  const lines: Array<Record<string, unknown>> = [{ type: 'number_of_executions', execution_count: run.execution_count }]
  let stderr = result.stderr
  const traceback = result.error?.traceback
  // the traceback is the error line's, not stderr's (a kernel reports it once)
  if (traceback !== undefined && traceback !== '' && stderr.endsWith(traceback))
    stderr = stderr.slice(0, -traceback.length)
  if (result.stdout !== '') lines.push({ type: 'stdout', text: result.stdout, timestamp: at })
  if (stderr !== '') lines.push({ type: 'stderr', text: stderr, timestamp: at })
  for (const { data, main } of run.results) lines.push(resultLine(data, main))
  if (result.status !== 'ok' && result.error !== null) {
    const name =
      result.status === 'timeout' ? 'TimeoutError' : result.status === 'memory' ? 'MemoryError' : result.error.type
    lines.push({ type: 'error', name, value: result.error.message, traceback: traceback ?? '' })
  }
  lines.push({ type: 'end_of_execution' })
  return lines
}

/** A fleet status that is not the code's: the interpreter's 503 (retriable). */
const FLEET = new Set(['overloaded', 'queue_timeout', 'infra_error', 'invalid_request'])

/** Registers the interpreter's routes on the sandbox URL. */
export function interpreterRoutes(app: FastifyInstance, sandboxes: FleetSandboxes, maxTimeoutMs: number): void {
  const route = (tokenless: boolean) => ({
    constraints: { e2bSandboxPort: INTERPRETER_PORT },
    config: { ownAuth: true, e2bSandbox: { server: 'interpreter' as SandboxServer, tokenless } },
    schema: { hide: true }
  })
  const plain = (reply: FastifyReply, code: number, text: string): FastifyReply =>
    reply.code(code).type('text/plain; charset=utf-8').send(text)

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
      if (language === undefined)
        return plain(
          reply,
          400,
          `language ${JSON.stringify(body.language)} is not one sandfleet runs: python, javascript`
        )
      const { id, auth } = sandboxRef(request)
      let headSent = false
      let keepalive: NodeJS.Timeout | undefined
      const sendHead = (): void => {
        if (headSent || reply.raw.writableEnded) return
        headSent = true
        reply.hijack()
        reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson' })
        keepalive = setInterval(() => reply.raw.write('{"type": "keepalive"}\n'), KEEPALIVE_MS).unref()
      }
      const slow = setTimeout(sendHead, HEAD_AFTER_MS)
      try {
        const run = await sandboxes.call(
          id,
          auth,
          {
            op: 'run',
            code: body.code,
            ...(typeof body.context_id === 'string' ? { context: body.context_id } : { language }),
            ...(env === undefined ? {} : { env }),
            timeout_ms: maxTimeoutMs
          },
          request.callContext
        )
        if (!headSent && FLEET.has(run.result.status))
          return plain(reply, 503, `${run.result.status}: ${run.result.error?.message ?? 'the fleet could not run it'}`)
        const lines = executionLines(run)
          .map((l) => JSON.stringify(l) + '\n')
          .join('')
        // a run that ended before its head went: one answer, through Fastify (its hooks, its metrics)
        if (!headSent) return await reply.code(200).type('application/x-ndjson').send(lines)
        reply.raw.end(lines)
        return reply
      } catch (err) {
        if (!headSent) {
          const code = (err as { code?: unknown }).code
          if (code === 'SF_ERR_SANDBOX_CONTEXT_NOT_FOUND')
            return plain(reply, 404, `Context ${String(body.context_id)} not found`)
          return answerRefusal(request, reply, err)
        }
        const value = err instanceof Error ? err.message : String(err)
        reply.raw.end(JSON.stringify({ type: 'error', name: 'SandboxError', value, traceback: '' }) + '\n')
        return reply
      } finally {
        clearTimeout(slow)
        clearInterval(keepalive)
      }
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
      if (language === undefined)
        return plain(
          reply,
          400,
          `language ${JSON.stringify(body.language)} is not one sandfleet runs: python, javascript`
        )
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
