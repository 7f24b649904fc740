/**
 * Piston-compatible API (engineer-man/piston v2, what many code-execution tools and LLM agents
 * call): `POST /api/v2/execute` and `GET /api/v2/runtimes`, with Piston's fields, its answers and
 * its error body (`{message}`). Register it encapsulated (no fastify-plugin), so its error
 * handler stays here. `/execute` declares its call (the program, its run's limits) for the
 * gateway's pipeline; a call over the deployment's limits is Piston's 400 naming its field.
 *
 * @example
 * ```ts
 * await app.register(pistonCompat, { execute, runtimes: async () => [{ language: 'python', version: '3.11.2' }] })
 * ```
 */
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { LIMITS, type Language } from '@sandfleet/protocol'
import type { RouteCalls } from '../../pipeline/route-calls.ts'
import type { RunnerSet } from '../../runners/runner-set.ts'
import type { Api } from '../api.ts'
import { compatPath, settle, type ExecuteFn } from '../compat.ts'
import {
  callOf,
  faultStatus,
  FIELD_OF,
  languageOf,
  PISTON_ALIASES,
  PISTON_RUNTIMES,
  problemOf,
  toExecRequest,
  toPistonResult,
  type PistonRequest
} from './piston-map.ts'
import { PISTON_ERRORS, PistonRequestSchema, PistonResultSchema, PistonRuntimeSchema } from './piston-schemas.ts'

/** A language the fleet runs and the version it runs. */
export interface FleetRuntime {
  language: Language
  version: string
}

/** Options of {@link pistonCompat}. */
export interface PistonOptions {
  /** The gateway's execution path (routing, retries; its pipeline has admitted the request). */
  execute: ExecuteFn
  /** The languages the fleet runs now, with their versions. */
  runtimes: () => Promise<FleetRuntime[]>
  /**
   * The deployment's longest call (default: the contract's); an absent `run_timeout` is Piston's 3 s or this, whichever
   * is less.
   */
  maxTimeoutMs?: number
}

/** The version a language is said to run at when the fleet does not report one: what is known for sure. */
export const UNREPORTED_VERSIONS: Readonly<Record<Language, string>> = Object.freeze({
  python: '3',
  javascript: 'ECMAScript'
})

/** How long the fleet's Python version, once asked, is taken as known (ms). */
const VERSION_TTL_MS = 30_000

/** `Retry-After` of a busy fleet's 503, seconds. */
const BUSY_RETRY_AFTER_S = 1

/** The Piston routes as a Fastify plugin. */
export const pistonCompat: FastifyPluginAsync<PistonOptions> = async (app, opts) => {
  const maxTimeoutMs = opts.maxTimeoutMs ?? LIMITS.maxTimeoutMs
  const tags = ['Piston']
  // the schemas describe; the routes check as Piston does and answer what the mapper builds
  app.setValidatorCompiler(() => () => true)
  app.setSerializerCompiler(() => (data) => JSON.stringify(data))
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const invalidJson =
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      err instanceof SyntaxError
    const statusCode = invalidJson
      ? 400
      : typeof err.statusCode === 'number' && err.statusCode >= 400
        ? err.statusCode
        : 500
    if (statusCode >= 500) request.log.error({ err }, 'piston handler failed')
    return reply.code(statusCode).send({
      message: invalidJson
        ? `body is not valid JSON: ${err.message}`
        : statusCode >= 500
          ? 'Internal Server Error'
          : err.message
    })
  })

  const calls: RouteCalls<PistonRequest> = {
    of: (body) => [callOf(body, maxTimeoutMs)],
    refuse: (over) => ({
      statusCode: 400,
      payload: { message: `${FIELD_OF[over.field] ?? over.field}: ${over.message}` }
    })
  }
  const versionOf = async (language: Language): Promise<string> =>
    (await opts.runtimes()).find((r) => r.language === language)?.version ?? UNREPORTED_VERSIONS[language]

  app.post(
    '/api/v2/execute',
    {
      preValidation: (request, reply, done) => {
        const problem = problemOf(request.body)
        if (problem !== undefined) {
          void reply.code(400).send({ message: problem })
          return
        }
        done()
      },
      config: { calls },
      schema: {
        operationId: 'pistonExecute',
        summary: 'Piston: run a program (its first file) and answer how it ended',
        tags,
        body: PistonRequestSchema,
        response: { 200: { description: 'How the run ended', ...PistonResultSchema }, ...PISTON_ERRORS }
      }
    },
    async (request, reply) => {
      const body = request.body as PistonRequest
      const language = languageOf(body.language) as Language
      const [result, version] = await Promise.all([
        settle(async () => await opts.execute(toExecRequest(body, maxTimeoutMs), request.callContext)),
        versionOf(language)
      ])
      const fault = faultStatus(result.status)
      if (fault === undefined) return toPistonResult(language, version, result)
      if (fault === 503) void reply.header('retry-after', String(BUSY_RETRY_AFTER_S))
      return await reply
        .code(fault)
        .send({ message: `${result.status}: ${result.error?.message ?? 'the fleet could not run it'}` })
    }
  )

  app.get(
    '/api/v2/runtimes',
    {
      schema: {
        operationId: 'pistonRuntimes',
        summary: 'Piston: the languages the fleet runs, their versions and aliases',
        tags,
        response: {
          200: { description: 'One per language', type: 'array', items: PistonRuntimeSchema },
          '4xx': PISTON_ERRORS['4xx']
        }
      }
    },
    async () =>
      (await opts.runtimes()).map(({ language, version }) => ({
        language,
        version,
        aliases: [...PISTON_ALIASES[language]],
        runtime: PISTON_RUNTIMES[language]
      }))
  )
}

/**
 * The languages `runners` serve (those their load reports name; both before any report), and
 * Python's version as the routable runners' sandbox manifests report it (in a mixed fleet, the
 * first in sort order, as /v1/info lists them), asked of all at once at most every {@link VERSION_TTL_MS}.
 */
export function fleetRuntimes(runners: Pick<RunnerSet, 'members'>): () => Promise<FleetRuntime[]> {
  let python: { at: number; version: Promise<string | undefined> } | undefined
  const askPython = async (): Promise<string | undefined> => {
    const pythons = await Promise.all(
      runners.members
        .filter((m) => m.routable)
        .map(async (m) => {
          try {
            return (await m.client.info()).manifest?.python
          } catch {
            return undefined
          }
        })
    )
    return pythons.filter((v) => v !== undefined).sort()[0]
  }
  return async () => {
    if (python === undefined || Date.now() - python.at > VERSION_TTL_MS)
      python = { at: Date.now(), version: askPython() }
    const reported = runners.members.flatMap((m) => (m.routable && m.load !== null ? m.load.languages : []))
    const languages = (Object.keys(PISTON_ALIASES) as Language[]).filter(
      (l) => reported.length === 0 || reported.includes(l)
    )
    const pythonVersion = await python.version
    return languages.map((language) => ({
      language,
      version: language === 'python' ? (pythonVersion ?? UNREPORTED_VERSIONS.python) : UNREPORTED_VERSIONS[language]
    }))
  }
}

/** Piston on the gateway's pipeline. */
const routes: Api['routes'] = async (app, context) => {
  const { execute } = compatPath(context)
  await app.register(pistonCompat, {
    execute,
    runtimes: fleetRuntimes(context.runners),
    maxTimeoutMs: context.config.maxTimeoutMs
  })
}

/** Piston's execute API (v2). */
export const pistonApi: Api = {
  routes,
  tags: [
    {
      name: 'Piston',
      description: "Piston's execute API (v2: what code-execution tools and agents built on Piston call)"
    }
  ],
  imitates: "Piston's"
}
