/**
 * The ways `sandfleet bench judge` has a problem judged, each as its users call it:
 *
 * - `sandfleet /v1/judge`: the problem in one call (compiled once, each test a fresh process, stopped at the first
 *   failure);
 * - `sandfleet /v1/execute/batch` (Python): the 20 runs in one batch, the caller comparing each output;
 * - code-judge as rStar2-Agent's client calls it: one submission a test (its `expected_output`), all 20 in one
 *   `/run/long-batch`, the problem accepted when every submission's `success` is true (a C++ submission compiles
 *   each time);
 * - SandboxFusion as verl's reward calls it: one `/run_code` a test, the 20 at once, the caller comparing stdout (C++:
 *   compiled again for every test).
 *
 * Each answers the problem's verdict and what it cost: tests run, and (sandfleet's judge) each test's and the
 * compile's CPU and whether the compile came from the cache.
 */
import { request } from 'undici'
import type { ExecResult, JudgeResult } from '@sandfleet/protocol'
import { problemRequest, sameLines, type BenchProblem } from './judge-problems.ts'

/** A problem's outcome on one system. */
export interface ProblemOutcome {
  /** `accepted`, `wrong_answer`, or what else the system said (a fault: `http_500`, `queue_timeout`, …). */
  verdict: string
  /** Tests that ran. */
  testsRun: number
  /** Each test's own CPU, ms (sandfleet's judge). */
  testCpuMs?: number[]
  /** The compile's CPU, ms, when a compiler ran (sandfleet's judge). */
  compileCpuMs?: number
  /** Whether the compile came from the cache (sandfleet's judge, a compiled language). */
  cached?: boolean
}

/** A system that judges problems. */
export interface JudgeCaller {
  name: string
  judge: (p: BenchProblem) => Promise<ProblemOutcome>
}

async function post(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 1_800_000,
    bodyTimeout: 1_800_000
  })
  const text = await res.body.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: res.statusCode, body: parsed }
}

/** sandfleet's `/v1/judge`: one call a problem. */
export function sandfleetJudge(url: string): JudgeCaller {
  return {
    name: 'sandfleet /v1/judge',
    judge: async (p) => {
      const { status, body } = await post(`${url}/v1/judge`, problemRequest(p))
      if (status !== 200) return { verdict: `http_${status}`, testsRun: 0 }
      const r = body as JudgeResult
      const ran = r.tests.filter((t) => t.verdict !== 'skipped') as Array<{ cpu_ms?: number }>
      const outcome: ProblemOutcome = {
        verdict: r.verdict,
        testsRun: ran.length,
        testCpuMs: ran.flatMap((t) => (t.cpu_ms === undefined ? [] : [t.cpu_ms]))
      }
      if (r.compile !== null && p.language !== 'python') {
        outcome.cached = r.compile.cached
        if (!r.compile.cached && r.compile.cpu_ms !== undefined) outcome.compileCpuMs = r.compile.cpu_ms
      }
      return outcome
    }
  }
}

/** sandfleet's `/v1/execute/batch`: the 20 runs of a Python problem in one batch, compared here. */
export function sandfleetExecuteBatch(url: string): JudgeCaller {
  return {
    name: 'sandfleet /v1/execute/batch, caller compares',
    judge: async (p) => {
      const requests = p.tests.map((t) => ({ code: p.code, stdin: t.stdin }))
      const { status, body } = await post(`${url}/v1/execute/batch`, { requests })
      if (status !== 200) return { verdict: `http_${status}`, testsRun: 0 }
      const results = (body as { results: ExecResult[] }).results
      for (let i = 0; i < results.length; i++) {
        const r = results[i] as ExecResult
        if (r.status !== 'ok') return { verdict: r.status, testsRun: results.length }
        if (!sameLines(r.stdout, p.tests[i]?.expected ?? ''))
          return { verdict: 'wrong_answer', testsRun: results.length }
      }
      return { verdict: 'accepted', testsRun: results.length }
    }
  }
}

/** code-judge as rStar2-Agent's client calls it: one submission a test, the problem's 20 in one `/run/long-batch`. */
export function codeJudge(url: string): JudgeCaller {
  return {
    name: 'code-judge /run/long-batch, a submission a test',
    judge: async (p) => {
      const submissions = p.tests.map((t) => ({
        type: p.language,
        solution: p.code,
        input: t.stdin,
        expected_output: t.expected
      }))
      const { status, body } = await post(`${url}/run/long-batch`, { type: 'batch', submissions })
      if (status !== 200) return { verdict: `http_${status}`, testsRun: 0 }
      const results = (body as { results: Array<{ success: boolean; run_success: boolean; reason: string }> }).results
      const fault = results.find((r) => r.reason !== '')
      if (fault !== undefined) return { verdict: fault.reason, testsRun: results.length }
      return { verdict: results.every((r) => r.success) ? 'accepted' : 'wrong_answer', testsRun: results.length }
    }
  }
}

/** SandboxFusion as verl's reward calls it: one `/run_code` a test, the 20 at once, compared here. */
export function sandboxFusion(url: string): JudgeCaller {
  return {
    name: 'SandboxFusion /run_code, a call a test',
    judge: async (p) => {
      const answers = await Promise.all(
        p.tests.map(
          async (t) =>
            await post(`${url}/run_code`, {
              code: p.code,
              language: p.language,
              stdin: t.stdin,
              run_timeout: 10,
              compile_timeout: 60,
              memory_limit_MB: -1,
              files: {},
              fetch_files: []
            })
        )
      )
      for (let i = 0; i < answers.length; i++) {
        const { status, body } = answers[i] as { status: number; body: any }
        if (status !== 200) return { verdict: `http_${status}`, testsRun: answers.length }
        if (body.status === 'SandboxError') return { verdict: 'sandbox_error', testsRun: answers.length }
        const stdout = body.run_result?.stdout ?? ''
        if (body.status !== 'Success' || !sameLines(stdout, p.tests[i]?.expected ?? ''))
          return { verdict: body.status === 'Success' ? 'wrong_answer' : 'failed', testsRun: answers.length }
      }
      return { verdict: 'accepted', testsRun: answers.length }
    }
  }
}
