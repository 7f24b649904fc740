/**
 * SandboxFusion-compatible API (what verl's sandbox tool and SkyRL call): `POST /run_code` and
 * `POST /run_jupyter`, with SandboxFusion's request fields and its response shapes exactly.
 * Register it encapsulated (no fastify-plugin), so its FastAPI-style error handler stays here.
 * Its routes declare their calls (a `/run_code` body one, a notebook's cells one at a time) for
 * the gateway's pipeline, and answer a call over the deployment's limits in SandboxFusion's own
 * shapes (a 422 naming its field; a notebook's `SandboxError`).
 *
 * @example
 * ```ts
 * await app.register(sandboxFusionCompat, { execute: (req) => fleet.execute(req), sessions })
 * ```
 */
import type { FastifyPluginAsync } from 'fastify'
import { LIMITS, SESSION_LIMITS, type ExecResult } from '@sandfleet/protocol'
import { judgeCall } from '../../pipeline/call-limits.ts'
import type { JudgedLanguages } from '../../runners/judged-languages.ts'
import type { Api } from '../api.ts'
import { compatPath, settle, settleJudge, type CompatSessions, type ExecuteFn, type JudgeFn } from '../compat.ts'
import {
  installFastapiErrorHandler,
  literalError,
  modelBody,
  modelSchema,
  toNumber,
  UNPROCESSABLE,
  validateModel,
  valueError,
  type FastapiErrorBody,
  type FastapiErrorItem
} from '../fastapi/fastapi-errors.ts'
import { describeOnly, FASTAPI_ERRORS } from '../fastapi/fastapi-schemas.ts'
import { fleetJudges, isLanguageRefusal } from '../judged-run.ts'
import {
  isCompiled,
  isSandboxError,
  judgedRunCodeResponse,
  RUN_CODE_MODEL,
  RUN_JUPYTER_MODEL,
  SF_COMPILED,
  SF_DEFAULTS,
  SF_LANGUAGES,
  secondsToMs,
  toExecRequest,
  toJudgeRequest,
  toJupyterCell,
  toRunCodeResponse,
  type JupyterCell,
  type RunCodeRequest,
  type RunJupyterRequest,
  type RunJupyterResponse,
  undecodableFile
} from './sandbox-fusion-map.ts'
import { RunCodeResponseSchema, RunJupyterResponseSchema } from './sandbox-fusion-schemas.ts'

/** Options of {@link sandboxFusionCompat}. */
export interface SandboxFusionOptions {
  /** The gateway's execution path (routing, retries; its pipeline has admitted the request). */
  execute: ExecuteFn
  /** The fleet's judge, which compiles and runs a compiled language's program (without it, those are a 422). */
  judge?: JudgeFn
  /** The languages the fleet judges (default: unknown; the fleet answers for itself). */
  judgedLanguages?: () => Promise<JudgedLanguages>
  /** Sessions, for `/run_jupyter`; without them the route answers `SandboxError`. */
  sessions?: CompatSessions
  /**
   * The deployment's longest call (default: the contract's). An absent `run_timeout` defaults to
   * SandboxFusion's 10 s or this, whichever is less; a larger one given is a 422. A notebook's
   * cells each run at most this long (its `total_timeout` spans them all).
   */
  maxTimeoutMs?: number
}

/**
 * Where an `ExecRequest` field came from in a `/run_code` body (for the 422 of a limit: the deployment's, or a
 * runner's).
 */
const FIELD_OF: Readonly<Record<string, string>> = Object.freeze({
  language: 'language',
  compile_timeout_ms: 'compile_timeout',
  'compare/checker/code': 'code',
  timeout_ms: 'run_timeout',
  memory_mb: 'memory_limit_MB',
  code: 'code',
  stdin: 'stdin',
  files: 'files',
  fetch_files: 'fetch_files'
})

/**
 * A body of `model` whose files a sandbox can all decode (each path in its writable places, each
 * content base64), or the 422 items saying why not: the caller's mistake, before anything runs; a compiled program
 * takes no files (it is judged in a work dir of its own).
 */
function checkBody(model: Parameters<typeof validateModel>[1]): (body: unknown) => FastapiErrorItem[] {
  return (body) => {
    const detail = validateModel(body, model)
    if (detail.length > 0) return detail
    const run = body as RunCodeRequest
    if (typeof run.language === 'string' && isCompiled(run.language)) {
      for (const field of ['files', 'fetch_files'] as const) {
        const value = run[field]
        if (value != null && Object.keys(value).length > 0)
          return valueError(field, `${field} are not offered for ${run.language} programs on this fleet`, value).detail
      }
    }
    const file = undecodableFile(run)
    return file === undefined ? [] : valueError('files', file.message, file.path).detail
  }
}

/** The SandboxFusion routes as a Fastify plugin. */
export const sandboxFusionCompat: FastifyPluginAsync<SandboxFusionOptions> = async (app, opts) => {
  installFastapiErrorHandler(app)
  describeOnly(app)
  const maxTimeoutMs = opts.maxTimeoutMs ?? LIMITS.maxTimeoutMs
  const tags = ['SandboxFusion']
  /** The 422 of a compiled `language` the fleet judges no runner for (or has no judge for), listing what it takes. */
  const unjudged = async (language: string): Promise<FastapiErrorBody | undefined> => {
    if (!isCompiled(language)) return undefined
    const languages = opts.judgedLanguages === undefined ? { byName: undefined } : await opts.judgedLanguages()
    const judges = (l: string): boolean => opts.judge !== undefined && fleetJudges(languages, SF_COMPILED[l] ?? l)
    if (judges(language)) return undefined
    return literalError(
      ['body', 'language'],
      [...Object.keys(SF_LANGUAGES), ...Object.keys(SF_COMPILED).filter(judges)],
      language
    )
  }

  app.post(
    '/run_code',
    {
      preValidation: modelBody(checkBody(RUN_CODE_MODEL)),
      config: {
        calls: {
          of: (body: RunCodeRequest) => [
            isCompiled(body.language)
              ? judgeCall(toJudgeRequest(body, maxTimeoutMs))
              : toExecRequest(body, maxTimeoutMs)
          ],
          refuse: (over, body: RunCodeRequest) => {
            const field = over.field.startsWith('files/') ? 'files' : (FIELD_OF[over.field] ?? 'code')
            return {
              statusCode: UNPROCESSABLE,
              payload: valueError(field, over.message, (body as unknown as Record<string, unknown>)[field] ?? null)
            }
          }
        }
      },
      schema: {
        operationId: 'sandboxFusionRunCode',
        summary: 'SandboxFusion: run one program in a fresh sandbox',
        tags,
        body: modelSchema(RUN_CODE_MODEL, 'RunCodeRequest'),
        response: {
          200: { description: 'The run (status Success, Failed or SandboxError)', ...RunCodeResponseSchema },
          ...FASTAPI_ERRORS
        }
      }
    },
    async (request, reply) => {
      const body = request.body as RunCodeRequest
      const refused = await unjudged(body.language)
      if (refused !== undefined) return await reply.code(UNPROCESSABLE).send(refused)
      if (isCompiled(body.language) && opts.judge !== undefined) {
        const judge = opts.judge
        const judged = await settleJudge(
          async () => await judge(toJudgeRequest(body, maxTimeoutMs), request.callContext),
          body.language
        )
        if (judged.verdict === 'invalid_request') {
          const field = isLanguageRefusal(judged) ? 'language' : fieldOf(judged.error?.message ?? '')
          return await reply
            .code(UNPROCESSABLE)
            .send(
              valueError(
                field,
                judged.error?.message ?? 'invalid request',
                (body as unknown as Record<string, unknown>)[field] ?? null
              )
            )
        }
        return judgedRunCodeResponse(judged)
      }
      const result = await settle(() => opts.execute(toExecRequest(body, maxTimeoutMs), request.callContext))
      if (result.status === 'invalid_request') {
        const field = fieldOf(result.error?.message ?? '')
        return reply
          .code(UNPROCESSABLE)
          .send(
            valueError(
              field,
              result.error?.message ?? 'invalid request',
              (body as unknown as Record<string, unknown>)[field] ?? null
            )
          )
      }
      return toRunCodeResponse(result)
    }
  )

  app.post(
    '/run_jupyter',
    {
      preValidation: modelBody(checkBody(RUN_JUPYTER_MODEL)),
      config: {
        calls: {
          // each cell runs within maxTimeoutMs by construction (runJupyter); their code is held to the limit
          of: (body: RunJupyterRequest) => body.cells.map((code) => ({ code })),
          weight: () => 1, // the cells run one at a time
          refuse: (over) => ({
            statusCode: 200,
            payload: sandboxError(`invalid_request: ${over.message} (cell ${over.index ?? 0})`)
          })
        }
      },
      schema: {
        operationId: 'sandboxFusionRunJupyter',
        summary: 'SandboxFusion: run notebook cells in order in one Python state',
        tags,
        body: modelSchema(RUN_JUPYTER_MODEL, 'RunJupyterRequest'),
        response: {
          200: {
            description: "The cells' outputs (status Success, Failed or SandboxError)",
            ...RunJupyterResponseSchema
          },
          ...FASTAPI_ERRORS
        }
      }
    },
    async (request) =>
      await runJupyter(
        request.body as RunJupyterRequest & Pick<RunCodeRequest, 'files' | 'fetch_files'>,
        opts.sessions,
        maxTimeoutMs
      )
  )
}

/** SandboxFusion on the gateway's pipeline. */
const routes: Api['routes'] = async (app, context) => {
  const { execute, judge, judgedLanguages, sessionsFor } = compatPath(context)
  // /run_jupyter opens and closes its session within one request: no caller can reach it
  await app.register(sandboxFusionCompat, {
    execute,
    judge,
    judgedLanguages,
    sessions: sessionsFor(''),
    maxTimeoutMs: context.config.maxTimeoutMs
  })
}

/**
 * The `/run_code` field a fleet refusal names (its message names the request's field: `field: why`, or the field
 * within it); the longest name that matches wins (`compile_timeout_ms` over `timeout_ms`).
 */
function fieldOf(message: string): string {
  const named = message.split(':')[0]?.trim() ?? ''
  if (FIELD_OF[named] !== undefined) return FIELD_OF[named] as string
  const matches = Object.keys(FIELD_OF).filter((ours) => message.includes(ours))
  const longest = matches.sort((a, b) => b.length - a.length)[0]
  return longest === undefined ? 'code' : (FIELD_OF[longest] as string)
}

function sandboxError(message: string, cells: JupyterCell[] = []): RunJupyterResponse {
  return { status: 'SandboxError', message, driver: null, cells, executor_pod_name: null, files: {} }
}

/**
 * Runs the cells in order in one session. A cell that raises reports it in its `error` and the
 * next cells still run (as Jupyter does); a cell that passes `cell_timeout` is killed, the
 * session keeps the state it had before that cell, the next cells run, and the answer is
 * `Failed` with the driver `TimeLimitExceeded`. Passing `total_timeout` stops the run there.
 * `cell_timeout` 0 or absent (SandboxFusion's default) gives a cell no limit of its own but the
 * deployment's longest call (`maxTimeoutMs`), which also caps a larger `cell_timeout`.
 */
async function runJupyter(
  body: RunJupyterRequest & Pick<RunCodeRequest, 'files' | 'fetch_files'>,
  sessions: CompatSessions | undefined,
  maxTimeoutMs: number
): Promise<RunJupyterResponse> {
  if (sessions === undefined) return sandboxError('sessions are not enabled on this gateway')
  const totalTimeoutMs = secondsToMs(body.total_timeout, SF_DEFAULTS.totalTimeoutS)
  // 0 (SandboxFusion's default) sets no limit of a cell's own: the run's total_timeout bounds it
  const cellTimeoutS = toNumber(body.cell_timeout) ?? SF_DEFAULTS.cellTimeoutS
  const cellTimeoutMs = Math.min(cellTimeoutS > 0 ? secondsToMs(cellTimeoutS, 0) : totalTimeoutMs, maxTimeoutMs)
  const started = performance.now()
  let sessionId: string
  try {
    sessionId = await sessions.create({
      language: 'python',
      ttl_s: Math.min(SESSION_LIMITS.maxTtlS, Math.ceil(totalTimeoutMs / 1000) + 60),
      memory_mb: SESSION_LIMITS.defaultMemoryMb
    })
  } catch (err) {
    return sandboxError(`could not open a session: ${(err as Error).message}`)
  }
  const cells: JupyterCell[] = []
  let timedOut = false
  let last: ExecResult | undefined
  try {
    for (let i = 0; i < body.cells.length; i++) {
      const left = totalTimeoutMs - (performance.now() - started)
      if (left < 1) {
        timedOut = true
        break
      }
      const timeoutMs = Math.max(1, Math.min(cellTimeoutMs, Math.floor(left)))
      const cell: Parameters<CompatSessions['execute']>[1] = { code: body.cells[i] ?? '', timeout_ms: timeoutMs }
      if (i === 0 && body.files != null)
        cell.files = Object.fromEntries(Object.entries(body.files).filter((e): e is [string, string] => e[1] != null))
      if (i === body.cells.length - 1 && body.fetch_files !== undefined && body.fetch_files.length > 0)
        cell.fetch_files = body.fetch_files
      const result = await settle(() => sessions.execute(sessionId, cell))
      if (isSandboxError(result.status))
        return sandboxError(`${result.status}: ${result.error?.message ?? ''} (cell ${i})`, cells)
      last = result
      cells.push(toJupyterCell(result, cellTimeoutMs))
      if (result.status === 'timeout') {
        timedOut = true
        if (timeoutMs < cellTimeoutMs) break
      }
    }
  } finally {
    await sessions.close(sessionId).catch(() => {})
  }
  return {
    status: timedOut ? 'Failed' : 'Success',
    message: '',
    driver: {
      status: timedOut ? 'TimeLimitExceeded' : 'Finished',
      execution_time: (performance.now() - started) / 1000,
      return_code: timedOut ? null : 0,
      stdout: '',
      stderr: ''
    },
    cells,
    executor_pod_name: last === undefined || last.runner === '' ? null : last.runner,
    files: last?.files ?? {}
  }
}

/** SandboxFusion's API. */
export const sandboxFusionApi: Api = {
  routes,
  tags: [{ name: 'SandboxFusion', description: "SandboxFusion's API (what verl's sandbox tool and SkyRL call)" }],
  imitates: "SandboxFusion's"
}
