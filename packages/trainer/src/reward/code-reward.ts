/**
 * The code reward: the program in the model's answer (its last fenced code block) judged against the problem's tests
 * by the fleet (`POST /v1/judge`: compiled once, each test a fresh process, compared outside it). Every test passed
 * earns 1; with `partial`, tests passed over total. The fleet's verdicts (`overloaded`, `queue_timeout`,
 * `infra_error`, left after the client's retries) score nothing: the result says `fleetFault`, and the caller judges
 * again or leaves the rollout out, as it does an episode whose tool call met a fault. A judge the fleet refused
 * (`invalid_request`: the dataset's tests, not the model) is `unscored` too.
 */
import { isRetriableVerdict, type JudgeRequest, type JudgeResult } from '@sandfleet/protocol'

/** What judges a program: a `SandfleetClient`, or anything with its `judge`. */
export interface Judge {
  judge(request: JudgeRequest): Promise<JudgeResult>
}

/** A problem's tests, in a form the judge takes: `input_output` (APPS/TACO/verl) or `tests`. */
export interface CodeTests {
  /** The language the program must be written in (default python). */
  language?: string
  input_output?: NonNullable<JudgeRequest['input_output']>
  tests?: NonNullable<JudgeRequest['tests']>
  /** How outputs are compared (default the judge's `lines`). */
  compare?: JudgeRequest['compare']
  /** Each test's time limit, ms (default the judge's). */
  timeout_ms?: number
  /** Each test's memory, MiB (default the judge's). */
  memory_mb?: number
}

/** Options of {@link codeReward}. */
export interface CodeRewardOptions {
  /** Tests passed over total instead of all-or-nothing (default false). */
  partial?: boolean
  /** Run every test even after one fails (default: `partial`, which needs them all counted). */
  runAll?: boolean
  /** A test's time limit when the problem gives none, ms. */
  timeoutMs?: number
}

/** The reward of one response and how it was decided. */
export interface CodeReward {
  /** 1 when every test passed (or passed/total with `partial`); 0 otherwise and when unscored. */
  reward: number
  /** The judge's verdict; `no_code` when the response holds no program. */
  verdict: JudgeResult['verdict'] | 'no_code'
  passed: number
  total: number
  /** The program judged. */
  code?: string
  /** The fleet failed to judge it (retriable): score nothing; judge again or leave the rollout out. */
  fleetFault: boolean
  /** Why it could not be scored (the fleet's fault, or the tests the fleet refused); absent when scored. */
  unscored?: string
}

/** Names a fenced block's info string may give each language, lowercase. */
const FENCE_NAMES: Readonly<Record<string, readonly string[]>> = Object.freeze({
  python: ['python', 'python3', 'py', 'py3'],
  cpp: ['cpp', 'c++', 'cxx', 'cc'],
  c: ['c'],
  javascript: ['javascript', 'js', 'node']
})

/**
 * The program of a response: its last fenced code block (```` ```lang … ``` ````) in `language` when one names it,
 * else its last fenced block of any language or none; undefined when it has none.
 */
export function extractCode(response: string, language = 'python'): string | undefined {
  const blocks = [...response.matchAll(/```[ \t]*([^\n`]*)\n([\s\S]*?)```/g)].map((m) => ({
    info: (m[1] ?? '').trim().toLowerCase().split(/\s+/)[0] ?? '',
    code: m[2] ?? ''
  }))
  const names = FENCE_NAMES[language] ?? [language]
  const named = blocks.filter((b) => names.includes(b.info))
  const pick = named.at(-1) ?? blocks.filter((b) => b.info === '' || !isKnownName(b.info)).at(-1) ?? blocks.at(-1)
  return pick === undefined || pick.code.trim() === '' ? undefined : pick.code
}

function isKnownName(info: string): boolean {
  return Object.values(FENCE_NAMES).some((names) => names.includes(info))
}

/** The judge request of `code` against `tests`. */
export function codeJudgeRequest(code: string, tests: CodeTests, options: CodeRewardOptions = {}): JudgeRequest {
  const request: JudgeRequest = { language: tests.language ?? 'python', code }
  if (tests.input_output !== undefined) request.input_output = tests.input_output
  else request.tests = tests.tests ?? []
  if (tests.compare !== undefined) request.compare = tests.compare
  const timeoutMs = tests.timeout_ms ?? options.timeoutMs
  if (timeoutMs !== undefined) request.timeout_ms = timeoutMs
  if (tests.memory_mb !== undefined) request.memory_mb = tests.memory_mb
  if (options.runAll ?? options.partial === true) request.run_all = true
  return request
}

/** Judges the response's program against `tests` through `judge` and scores it; see the module comment. */
export async function codeReward(
  judge: Judge,
  response: string,
  tests: CodeTests,
  options: CodeRewardOptions = {}
): Promise<CodeReward> {
  const code = extractCode(response, tests.language ?? 'python')
  const total = tests.input_output?.inputs.length ?? tests.tests?.length ?? 0
  if (code === undefined) return { reward: 0, verdict: 'no_code', passed: 0, total, fleetFault: false }
  const result = await judge.judge(codeJudgeRequest(code, tests, options))
  const base = { verdict: result.verdict, passed: result.passed, total: result.total || total, code }
  if (isRetriableVerdict(result.verdict))
    return { ...base, reward: 0, fleetFault: true, unscored: `${result.verdict}: ${result.error?.message ?? ''}` }
  if (result.verdict === 'invalid_request')
    return { ...base, reward: 0, fleetFault: false, unscored: `invalid_request: ${result.error?.message ?? ''}` }
  const reward =
    result.verdict === 'accepted' ? 1 : options.partial === true && base.total > 0 ? result.passed / base.total : 0
  return { ...base, reward, fleetFault: false }
}
