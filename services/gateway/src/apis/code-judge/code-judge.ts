/**
 * code-judge-compatible API (what rStar2-Agent's tool calls): `POST /run`, `/run/batch`,
 * `/run/long-batch`, `/judge` and its batch forms, `GET /status`, `GET /ping`, with
 * code-judge's request fields and result shapes. Register it encapsulated (no fastify-plugin).
 * Its routes declare their calls (a submission one, a batch its submissions) for the gateway's
 * pipeline; a submission over the deployment's limits is answered `invalid_input`, unrun.
 *
 * @example
 * ```ts
 * await app.register(codeJudgeCompat, { execute, executeBatch, status: () => ({ queue: 0, num_workers: 8 }) })
 * ```
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyPluginAsync } from 'fastify'
import { failedResult, JUDGE_LIMITS, LIMITS, type CallContext, type ExecResult } from '@sandfleet/protocol'
import { judgeCall, type Call, type OverLimit } from '../../pipeline/call-limits.ts'
import type { RouteCalls } from '../../pipeline/route-calls.ts'
import type { JudgedLanguages } from '../../runners/judged-languages.ts'
import type { Api } from '../api.ts'
import {
  compatPath,
  resultOfThrown,
  settle,
  settleJudge,
  type ExecuteBatchFn,
  type ExecuteFn,
  type JudgeBatchFn,
  type JudgeFn
} from '../compat.ts'
import {
  installFastapiErrorHandler,
  literalError,
  modelBody,
  modelSchema,
  validateModel,
  UNPROCESSABLE,
  type FastapiErrorItem
} from '../fastapi/fastapi-errors.ts'
import { fleetJudges, runOf } from '../judged-run.ts'
import { describeOnly, FASTAPI_ERRORS } from '../fastapi/fastapi-schemas.ts'
import { batchResultSchema, CodeJudgeStatusSchema, JudgeResultSchema, RunResultSchema } from './code-judge-schemas.ts'
import {
  BATCH_MODEL,
  CJ_COMPILED,
  CJ_DEFAULT_LIMITS,
  CJ_SNIPPETS,
  CJ_TYPES,
  SUBMISSION_MODEL,
  toExecRequest,
  toJudgeRequest,
  toJudgeResult,
  toRunResult,
  type BatchSubmission,
  type JudgeResult,
  type Submission,
  type SubmissionLimits
} from './code-judge-map.ts'

/** Options of {@link codeJudgeCompat}. */
export interface CodeJudgeOptions {
  execute: ExecuteFn
  executeBatch: ExecuteBatchFn
  /** The fleet's judge, which compiles and runs a `cpp` submission. */
  judge: JudgeFn
  judgeBatch: JudgeBatchFn
  /** The languages the fleet judges (default: unknown; a `cpp` submission is sent and the fleet answers for itself). */
  judgedLanguages?: () => Promise<JudgedLanguages>
  /** `GET /status`: jobs waiting and sandboxes that can run at once, across the fleet. */
  status: () => { queue: number; num_workers: number } | Promise<{ queue: number; num_workers: number }>
  /** Limits of every submission (default code-judge's: 10 s, 384 MiB, stdout cut at 1,000 characters). */
  limits?: Partial<SubmissionLimits>
  /** How long a long-batch item keeps retrying while the fleet is busy (default one hour). */
  longBatchWaitMs?: number
  /** Items of one long batch in flight at once (default 64). */
  longBatchConcurrency?: number
}

type Mode = 'run' | 'judge'
type Shape = (sub: Submission, result: ExecResult, stdoutChars: number) => JudgeResult

const shapes: Readonly<Record<Mode, Shape>> = { run: toRunResult, judge: toJudgeResult }

const submissionSchema = modelSchema(SUBMISSION_MODEL, 'Submission')
const batchSchema = modelSchema(BATCH_MODEL, 'BatchSubmission', { submissions: submissionSchema })
const resultSchemas = { run: RunResultSchema, judge: JudgeResultSchema }
const batchResultSchemas = {
  run: batchResultSchema(RunResultSchema, 'RunBatchResult'),
  judge: batchResultSchema(JudgeResultSchema, 'JudgeBatchResult')
}
/** What each mode answers, for the route summaries. */
const modeSummaries: Readonly<Record<Mode, string>> = {
  run: 'run a submission, answering its output',
  judge: 'judge a submission against expected_output, without its output'
}

/**
 * A compiled run's result as code-judge answers it: a refusal of the fleet (a runner's limit) says why in stderr, as
 * code-judge's results have no error field.
 */
function withReason(result: ExecResult): ExecResult {
  return result.status === 'invalid_request' && result.stderr === ''
    ? { ...result, stderr: `${result.error?.message ?? 'invalid input'}\n` }
    : result
}

/** The code-judge routes as a Fastify plugin. */
export const codeJudgeCompat: FastifyPluginAsync<CodeJudgeOptions> = async (app, opts) => {
  installFastapiErrorHandler(app)
  describeOnly(app)
  const tags = ['code-judge']
  const limits: SubmissionLimits = { ...CJ_DEFAULT_LIMITS, ...opts.limits }
  /** Runs one submission in `context`: a snippet as an execute, a compiled one as a judge of one test. */
  const execute = async (sub: Submission, context: CallContext): Promise<ExecResult> =>
    CJ_SNIPPETS.has(sub.type)
      ? await settle(async () => await opts.execute(toExecRequest(sub, limits), context))
      : withReason(
          runOf(await settleJudge(async () => await opts.judge(toJudgeRequest(sub, limits), context), sub.type))
        )
  /** The first submission whose type the fleet judges no runner for (its index), or undefined. */
  const unjudged = async (subs: readonly Submission[]): Promise<number | undefined> => {
    if (opts.judgedLanguages === undefined || subs.every((s) => CJ_SNIPPETS.has(s.type))) return undefined
    const languages = await opts.judgedLanguages()
    const i = subs.findIndex((s) => !CJ_SNIPPETS.has(s.type) && !fleetJudges(languages, CJ_COMPILED[s.type] ?? s.type))
    return i < 0 ? undefined : i
  }
  /** code-judge's 422 for a submission type the fleet has no runner for, at `loc`. */
  const notJudged = async (loc: Array<string | number>, type: string): Promise<ReturnType<typeof literalError>> => {
    const languages = opts.judgedLanguages === undefined ? { byName: undefined } : await opts.judgedLanguages()
    const served = CJ_TYPES.filter((t) => CJ_SNIPPETS.has(t) || fleetJudges(languages, CJ_COMPILED[t] ?? t))
    return literalError(loc, served, type)
  }
  /** A submission's call, as the limits stage sees it. */
  const callOf = (sub: Submission): Call =>
    CJ_SNIPPETS.has(sub.type) ? toExecRequest(sub, limits) : judgeCall(toJudgeRequest(sub, limits))
  const waitMs = opts.longBatchWaitMs ?? 3_600_000
  const concurrency = Math.max(1, opts.longBatchConcurrency ?? 64)
  // code-judge's results have no error field: the reason is said in stderr
  const refused = (over: OverLimit): ExecResult =>
    failedResult('invalid_request', 'SF_ERR_GATEWAY_INVALID_REQUEST', over.message, { stderr: `${over.message}\n` })
  const oneCall: RouteCalls<Submission> = { of: (sub) => [callOf(sub)] }
  const batchCalls: RouteCalls<BatchSubmission> = { of: (batch) => batch.submissions.map(callOf) }

  /**
   * A batch's submissions, the snippets as execute batches and the compiled ones as judge batches (each in chunks of
   * the contract's batch size), at once; one result per submission, in order.
   */
  const runBatch = async (subs: readonly Submission[], context: CallContext): Promise<ExecResult[]> => {
    const results: ExecResult[] = subs.map(() => resultOfThrown(new Error('no result')))
    const snippets = subs.flatMap((s, i) => (CJ_SNIPPETS.has(s.type) ? [i] : []))
    const compiled = subs.flatMap((s, i) => (CJ_SNIPPETS.has(s.type) ? [] : [i]))
    const chunks = <T>(indices: number[], run: (chunk: number[]) => Promise<T[]>, read: (r: T) => ExecResult) => {
      const sends: Array<Promise<void>> = []
      for (let i = 0; i < indices.length; i += LIMITS.maxBatchItems) {
        const chunk = indices.slice(i, i + LIMITS.maxBatchItems)
        sends.push(
          run(chunk).then(
            (got) => {
              chunk.forEach((j, k) => {
                if (got[k] !== undefined) results[j] = read(got[k] as T)
              })
            },
            (err: unknown) => {
              for (const j of chunk) results[j] = resultOfThrown(err)
            }
          )
        )
      }
      return sends
    }
    await Promise.all([
      ...chunks(
        snippets,
        async (chunk) =>
          await opts.executeBatch(
            chunk.map((j) => toExecRequest(subs[j] as Submission, limits)),
            context
          ),
        (r) => r
      ),
      ...chunks(
        compiled,
        async (chunk) =>
          await opts.judgeBatch(
            chunk.map((j) => toJudgeRequest(subs[j] as Submission, limits)),
            context
          ),
        (r) => withReason(runOf(r))
      )
    ])
    return results
  }

  for (const mode of ['run', 'judge'] as const) {
    const shape = shapes[mode]
    const Mode = mode === 'run' ? 'Run' : 'Judge'
    const one = { description: 'The result', ...resultSchemas[mode] }
    const many = { description: 'One result per submission, in order', ...batchResultSchemas[mode] }
    app.post(
      `/${mode}`,
      {
        preValidation: modelBody((body) => validateModel(body, SUBMISSION_MODEL)),
        config: {
          calls: {
            ...oneCall,
            refuse: (over, sub: Submission) => ({
              statusCode: 200,
              payload: shape(sub, refused(over), limits.stdoutChars)
            })
          }
        },
        schema: {
          operationId: `codeJudge${Mode}`,
          summary: `code-judge: ${modeSummaries[mode]}`,
          tags,
          body: submissionSchema,
          response: { 200: one, ...FASTAPI_ERRORS }
        }
      },
      async (request, reply) => {
        const sub = request.body as Submission
        if ((await unjudged([sub])) !== undefined)
          return await reply.code(UNPROCESSABLE).send(await notJudged(['body', 'type'], sub.type))
        return shape(sub, await execute(sub, request.callContext), limits.stdoutChars)
      }
    )

    // a batch with a submission over a limit runs none of them: that one says why, the others that they were not run
    const refuseBatch = (over: OverLimit, batch: BatchSubmission): { statusCode: number; payload: unknown } => {
      const notRun = refused({
        ...over,
        message: `not run: submission ${over.index ?? 0} of this batch is over this deployment's limits`
      })
      const results = batch.submissions.map((s, i) =>
        shape(s, i === over.index || over.index === undefined ? refused(over) : notRun, limits.stdoutChars)
      )
      return { statusCode: 200, payload: { sub_id: batch.sub_id ?? randomUUID(), results } }
    }
    app.post(
      `/${mode}/batch`,
      {
        preValidation: modelBody(checkBatch),
        config: { calls: { ...batchCalls, refuse: refuseBatch } },
        schema: {
          operationId: `codeJudge${Mode}Batch`,
          summary: `code-judge: ${modeSummaries[mode]}, for many at once`,
          tags,
          body: batchSchema,
          response: { 200: many, ...FASTAPI_ERRORS }
        }
      },
      async (request, reply) => {
        const batch = request.body as BatchSubmission
        const at = await unjudged(batch.submissions)
        if (at !== undefined)
          return await reply
            .code(UNPROCESSABLE)
            .send(await notJudged(['body', 'submissions', at, 'type'], batch.submissions[at]?.type ?? ''))
        const results = await runBatch(batch.submissions, request.callContext)
        return {
          sub_id: batch.sub_id ?? randomUUID(),
          results: batch.submissions.map((s, i) => shape(s, results[i] as ExecResult, limits.stdoutChars))
        }
      }
    )

    app.post(
      `/${mode}/long-batch`,
      {
        preValidation: modelBody(checkBatch),
        config: { calls: { ...batchCalls, refuse: refuseBatch, held: (weight) => Math.min(weight, concurrency) } },
        schema: {
          operationId: `codeJudge${Mode}LongBatch`,
          summary: `code-judge: ${modeSummaries[mode]}, for many at once, each waiting for capacity while the fleet is busy`,
          tags,
          body: batchSchema,
          response: { 200: many, ...FASTAPI_ERRORS }
        }
      },
      async (request, reply) => {
        const batch = request.body as BatchSubmission
        const at = await unjudged(batch.submissions)
        if (at !== undefined)
          return await reply
            .code(UNPROCESSABLE)
            .send(await notJudged(['body', 'submissions', at, 'type'], batch.submissions[at]?.type ?? ''))
        const deadline = Date.now() + waitMs
        const context = request.callContext
        const results = await mapPool(
          batch.submissions,
          concurrency,
          async (s) => await patiently(async () => await execute(s, context), deadline, context.signal)
        )
        return {
          sub_id: batch.sub_id ?? randomUUID(),
          results: batch.submissions.map((s, i) => shape(s, results[i] as ExecResult, limits.stdoutChars))
        }
      }
    )
  }

  app.get(
    '/status',
    {
      schema: {
        operationId: 'codeJudgeStatus',
        summary: 'code-judge: jobs waiting and Python workers across the fleet',
        tags,
        response: {
          200: { description: 'The queue and workers', ...CodeJudgeStatusSchema },
          '4xx': FASTAPI_ERRORS['4xx']
        }
      }
    },
    async () => {
      const s = await opts.status()
      return { queue: s.queue, num_workers: s.num_workers }
    }
  )

  app.get(
    '/ping',
    {
      schema: {
        operationId: 'codeJudgePing',
        summary: 'code-judge: liveness',
        tags,
        response: {
          200: { description: 'The JSON string "pong"', type: 'string', enum: ['pong'] },
          '4xx': FASTAPI_ERRORS['4xx']
        }
      }
    },
    async (_request, reply) => await reply.type('application/json').send('"pong"')
  )
}

/** code-judge on the gateway's pipeline: its workers are the fleet's Python sandboxes. */
const routes: Api['routes'] = async (app, context) => {
  const { execute, executeBatch, judge, judgeBatch, judgedLanguages } = compatPath(context)
  const { config, runners } = context
  // code-judge's workers run Python: the JavaScript pools are not counted
  const status = (): { queue: number; num_workers: number } => {
    let queue = 0
    let workers = 0
    for (const m of runners.members) {
      if (!m.routable || m.load === null) continue
      const python = m.load.pools?.python
      queue += python?.queued ?? m.load.queued
      workers += python?.capacity ?? m.load.capacity
    }
    return { queue, num_workers: workers }
  }
  const limits = {
    timeoutMs: config.codeJudgeTimeoutMs,
    memoryMb: config.codeJudgeMemoryMb,
    stdoutChars: config.codeJudgeStdoutChars,
    compileTimeoutMs: Math.min(JUDGE_LIMITS.defaultCompileTimeoutMs, config.maxTimeoutMs)
  }
  await app.register(codeJudgeCompat, {
    execute,
    executeBatch,
    judge,
    judgeBatch,
    judgedLanguages,
    status,
    limits
  })
}

/** A batch's 422 items: the batch's model, then each submission's. */
function checkBatch(body: unknown): FastapiErrorItem[] {
  const detail = validateModel(body, BATCH_MODEL)
  if (detail.length === 0) {
    ;(body as BatchSubmission).submissions.forEach((s, i) =>
      detail.push(...validateModel(s, SUBMISSION_MODEL, ['body', 'submissions', i]))
    )
  }
  return detail
}

/**
 * Runs `fn`, and while the fleet answers busy (`overloaded`, `queue_timeout`) tries again with
 * a growing pause, until `deadline`, or until the caller went away (`signal`): a long batch waits
 * for capacity instead of failing.
 */
export async function patiently(
  fn: () => Promise<ExecResult>,
  deadline: number,
  signal?: AbortSignal
): Promise<ExecResult> {
  let pauseMs = 20
  for (;;) {
    const result = await settle(fn)
    if (
      (result.status !== 'overloaded' && result.status !== 'queue_timeout') ||
      Date.now() + pauseMs >= deadline ||
      signal?.aborted === true
    )
      return result
    await sleep(pauseMs)
    pauseMs = Math.min(2_000, pauseMs * 2)
  }
}

/** Maps `items` through `fn` with at most `limit` in flight; results in input order. */
export async function mapPool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

/** code-judge's API. */
export const codeJudgeApi: Api = {
  routes,
  tags: [{ name: 'code-judge', description: "code-judge's API (what rStar2-Agent's tool calls)" }],
  imitates: "code-judge's"
}
