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
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify'
import { LIMITS, type ExecResult, type Language } from '@sandfleet/protocol'
import type { RouteCalls } from '../../pipeline/route-calls.ts'
import type { JudgedLanguages } from '../../runners/judged-languages.ts'
import type { RunnerSet } from '../../runners/runner-set.ts'
import type { Api } from '../api.ts'
import { compatPath, settle, settleJudge, type ExecuteFn, type JudgeFn } from '../compat.ts'
import { isLanguageRefusal, runOf } from '../judged-run.ts'
import {
  callOf,
  compiledOf,
  faultStatus,
  FIELD_OF,
  judgedPistonResult,
  languageOf,
  PISTON_ALIASES,
  PISTON_COMPILED,
  PISTON_COMPILED_RUNTIME,
  PISTON_RUNTIMES,
  problemOf,
  toExecRequest,
  toJudgeRequest,
  toPistonResult,
  type PistonRequest
} from './piston-map.ts'
import { PISTON_ERRORS, PistonRequestSchema, PistonResultSchema, PistonRuntimeSchema } from './piston-schemas.ts'

/** A language the fleet runs (Piston's name: python, javascript, c++, c) and the version it runs. */
export interface FleetRuntime {
  language: Language | keyof typeof PISTON_COMPILED
  version: string
}

/** Options of {@link pistonCompat}. */
export interface PistonOptions {
  /** The gateway's execution path (routing, retries; its pipeline has admitted the request). */
  execute: ExecuteFn
  /** The fleet's judge, which compiles and runs c++ and c (without it, those are unknown runtimes). */
  judge?: JudgeFn
  /** The languages the fleet runs now, with their versions (c++ and c when it judges them). */
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
  const versionOf = async (language: FleetRuntime['language']): Promise<string | undefined> =>
    (await opts.runtimes()).find((r) => r.language === language)?.version ?? UNREPORTED_VERSIONS[language as Language]
  /** Answers a fleet fault or refusal in Piston's shape. */
  const fault = async (reply: FastifyReply, status: number, result: ExecResult): Promise<FastifyReply> => {
    if (status === 503) void reply.header('retry-after', String(BUSY_RETRY_AFTER_S))
    return await reply
      .code(status)
      .send({ message: `${result.status}: ${result.error?.message ?? 'the fleet could not run it'}` })
  }

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
      const compiled = compiledOf(body.language)
      if (compiled !== undefined) {
        const version = opts.judge === undefined ? undefined : await versionOf(compiled as FleetRuntime['language'])
        if (opts.judge === undefined || version === undefined)
          return await reply.code(400).send({
            message: `language ${JSON.stringify(body.language)}: ${body.language}-${body.version} runtime is unknown (this fleet judges no ${compiled} now)`
          })
        const judge = opts.judge
        const result = await settleJudge(
          async () => await judge(toJudgeRequest(body, maxTimeoutMs), request.callContext),
          compiled
        )
        if (isLanguageRefusal(result))
          return await reply
            .code(400)
            .send({ message: `language ${JSON.stringify(body.language)}: ${result.error?.message ?? ''}` })
        const run = runOf(result)
        const status = faultStatus(run.status)
        if (status !== undefined) return await fault(reply, status, run)
        return judgedPistonResult(compiled, version, result)
      }
      const language = languageOf(body.language) as Language
      const [result, version] = await Promise.all([
        settle(async () => await opts.execute(toExecRequest(body, maxTimeoutMs), request.callContext)),
        versionOf(language)
      ])
      const status = faultStatus(result.status)
      if (status === undefined) return toPistonResult(language, version ?? UNREPORTED_VERSIONS[language], result)
      return await fault(reply, status, result)
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
      (await opts.runtimes()).map(({ language, version }) => {
        const compiled = PISTON_COMPILED[language]
        return compiled === undefined
          ? {
              language,
              version,
              aliases: [...PISTON_ALIASES[language as Language]],
              runtime: PISTON_RUNTIMES[language as Language]
            }
          : { language, version, aliases: [...compiled.aliases], runtime: PISTON_COMPILED_RUNTIME }
      })
  )
}

/**
 * The languages `runners` serve (those their load reports name; both before any report), and
 * Python's version as the routable runners' sandbox manifests report it (in a mixed fleet, the
 * first in sort order, as /v1/info lists them), asked of all at once at most every {@link VERSION_TTL_MS};
 * then c++ and c when `judged` says the fleet judges them, with their compilers' versions.
 */
export function fleetRuntimes(
  runners: Pick<RunnerSet, 'members'>,
  judged?: () => Promise<JudgedLanguages>
): () => Promise<FleetRuntime[]> {
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
    const [pythonVersion, judges] = await Promise.all([python.version, judged?.()])
    const interpreted: FleetRuntime[] = languages.map((language) => ({
      language,
      version: language === 'python' ? (pythonVersion ?? UNREPORTED_VERSIONS.python) : UNREPORTED_VERSIONS[language]
    }))
    const compiled = Object.entries(PISTON_COMPILED).flatMap(([language, { judge }]): FleetRuntime[] => {
      const info = judges?.byName?.get(judge)
      return info === undefined ? [] : [{ language: language as FleetRuntime['language'], version: info.version }]
    })
    return [...interpreted, ...compiled]
  }
}

/** Piston on the gateway's pipeline. */
const routes: Api['routes'] = async (app, context) => {
  const { execute, judge, judgedLanguages } = compatPath(context)
  await app.register(pistonCompat, {
    execute,
    judge,
    runtimes: fleetRuntimes(context.runners, judgedLanguages),
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
