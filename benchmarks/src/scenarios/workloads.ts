/**
 * The calls the scenarios send, and the closed-loop runs built from them. Each call's stdout is
 * checked, so a wrong answer counts as a failure (`wrong_output`), not as a fast call.
 */
import { classifyBatch, classifyExecute, classifyHttp, runLoad, type LoadReport, type LoadShape } from '../load.ts'
import type { Server } from '../fleet.ts'
import { runWrk, type WrkTarget } from '../wrk.ts'
import type { BenchContext } from './context.ts'

/** One closed-loop run on the harness's load generator (`--engine`: wrk when installed, else undici). */
export async function drive(ctx: BenchContext, target: WrkTarget, shape: LoadShape): Promise<LoadReport> {
  if (ctx.options.engine === 'wrk') return await runWrk(target, shape)
  const classify =
    target.kind === 'http'
      ? classifyHttp()
      : target.kind === 'batch'
        ? classifyBatch(target.callsPerRequest, target.stdout)
        : classifyExecute(target.stdout)
  return await runLoad(
    { url: target.url, path: target.path, body: target.body, callsPerRequest: target.callsPerRequest, classify },
    shape
  )
}

/** A snippet and the stdout it must print. */
export interface Workload {
  name: string
  code: string
  stdout: string
  /** The request's `language`; absent: the contract's default (python), and none is sent. */
  language?: 'python' | 'javascript'
  /** The request's `isolation`; absent: the runner's default, and none is sent. */
  isolation?: 'fork' | 'reuse'
}

/** The request body of one call of `workload`. */
function call(workload: Workload): { code: string; language?: string; isolation?: string } {
  return {
    ...(workload.language === undefined ? {} : { language: workload.language }),
    code: workload.code,
    ...(workload.isolation === undefined ? {} : { isolation: workload.isolation })
  }
}

/** `print(1+1)`. */
export const TRIVIAL: Workload = { name: 'print(1+1)', code: 'print(1+1)', stdout: '2\n' }

/** `sympy.factor(x**4-1)`, sympy imported in the call (the zygote has it warm). */
export const SYMPY: Workload = {
  name: 'sympy.factor(x**4-1)',
  code: "import sympy\nx = sympy.symbols('x')\nprint(sympy.factor(x**4 - 1))",
  stdout: '(x - 1)*(x + 1)*(x**2 + 1)\n'
}

/** A closed loop of single calls (`/v1/execute`) at `concurrency`. */
export async function loadExecute(
  ctx: BenchContext,
  server: Server,
  workload: Workload,
  concurrency: number
): Promise<LoadReport> {
  const { durationS, warmupS, connections } = ctx.options
  ctx.log(
    `  ${workload.name} → ${server.url}/v1/execute at concurrency ${concurrency}, ${warmupS} s warm-up + ${durationS} s`
  )
  const report = await drive(
    ctx,
    {
      url: server.url,
      path: '/v1/execute',
      body: JSON.stringify(call(workload)),
      callsPerRequest: 1,
      kind: 'execute',
      stdout: workload.stdout
    },
    { concurrency, durationS, warmupS, connections, serverPid: server.pid }
  )
  ctx.log(
    `  ${Math.round(report.okCallsPerS)} ok calls/s, p50 ${report.latencyMs.p50.toFixed(2)} ms, outcomes ${JSON.stringify(report.counts)}`
  )
  return report
}

/** A closed loop of batches (`/v1/execute/batch`, JSON) of `size` calls, `concurrency` batches in flight. */
export async function loadBatch(
  ctx: BenchContext,
  server: Server,
  workload: Workload,
  size: number,
  concurrency: number
): Promise<LoadReport> {
  const { durationS, warmupS, connections } = ctx.options
  ctx.log(
    `  ${workload.name} × ${size} → ${server.url}/v1/execute/batch, ${concurrency} batches in flight, ${warmupS} s warm-up + ${durationS} s`
  )
  const requests = Array.from({ length: size }, () => call(workload))
  const report = await drive(
    ctx,
    {
      url: server.url,
      path: '/v1/execute/batch',
      body: JSON.stringify({ requests }),
      callsPerRequest: size,
      kind: 'batch',
      stdout: workload.stdout
    },
    { concurrency, durationS, warmupS, connections, serverPid: server.pid }
  )
  ctx.log(
    `  ${Math.round(report.okCallsPerS)} ok calls/s, batch p50 ${report.latencyMs.p50.toFixed(1)} ms, outcomes ${JSON.stringify(report.counts)}`
  )
  return report
}

/**
 * A closed loop of `GET /healthz` at `concurrency`: the HTTP floor of the path (client, Fastify,
 * keep-alive), with no runner and no sandbox in it.
 */
export async function loadHealthz(ctx: BenchContext, server: Server, concurrency: number): Promise<LoadReport> {
  const { durationS, warmupS, connections } = ctx.options
  ctx.log(`  GET ${server.url}/healthz at concurrency ${concurrency}, ${warmupS} s warm-up + ${durationS} s`)
  const report = await drive(
    ctx,
    { url: server.url, path: '/healthz', body: undefined, callsPerRequest: 1, kind: 'http' },
    { concurrency, durationS, warmupS, connections, serverPid: server.pid }
  )
  ctx.log(
    `  ${Math.round(report.okCallsPerS)} ok calls/s, p50 ${report.latencyMs.p50.toFixed(2)} ms, outcomes ${JSON.stringify(report.counts)}`
  )
  return report
}
