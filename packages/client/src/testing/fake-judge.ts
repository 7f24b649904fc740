/**
 * The fake fleet's judge (`/v1/judge`, `/v1/judge/batch`): {@link pythonJudgeBehavior} judges a Python program with
 * the host's python3, one run a test (unsandboxed: tests only, never untrusted code), by the contract's rules for
 * stdin tests (outputs compared by lines, exact or tokens; a non-zero exit a runtime_error; the first failure skips
 * the rest unless `run_all`) and `call` tests (the function's return value as JSON); another language is refused
 * `invalid_request` naming `language`, as a runner that does not judge it answers.
 */
import {
  failedJudgeResult,
  judgeRequestProblem,
  resolveJudgeRequest,
  type ExecResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeTestResult,
  type ResolvedCompare,
  type ResolvedJudgeTest
} from '@sandfleet/protocol'
import type { FakeHttpReply } from './fake-reply.ts'

/** Decides the answer to one judge: a result, or an HTTP error reply. */
export type FakeJudgeBehavior = (
  req: JudgeRequest,
  ctx: { attempt: number }
) => JudgeResult | FakeHttpReply | Promise<JudgeResult | FakeHttpReply>

/** Runs one program; the fake fleet's Python behavior. */
export type RunPython = (code: string, stdin: string, timeoutMs: number) => Promise<ExecResult>

function lines(text: string): string {
  const l = text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((x) => x.trimEnd())
  while (l.length > 0 && l[l.length - 1] === '') l.pop()
  return l.join('\n')
}

function sameText(compare: ResolvedCompare, out: string, expected: string): boolean {
  if (compare.kind === 'exact') return out === expected
  if (compare.kind === 'tokens' || compare.kind === 'float') {
    const a = out.split(/\s+/).filter(Boolean)
    const b = expected.split(/\s+/).filter(Boolean)
    const tolerance = compare.kind === 'float' ? compare.tolerance : 0
    return (
      a.length === b.length &&
      a.every((t, i) => {
        const x = Number(t)
        const y = Number(b[i])
        return (
          t === b[i] ||
          (tolerance > 0 &&
            Number.isFinite(x) &&
            Number.isFinite(y) &&
            Math.abs(x - y) <= tolerance * Math.max(1, Math.abs(y)))
        )
      })
    )
  }
  return lines(out) === lines(expected)
}

/** The program a `call` test runs: the code, then the call, its return value printed as JSON on a line of its own. */
function callProgram(code: string, call: NonNullable<ResolvedJudgeTest['call']>): string {
  const fn = JSON.stringify(call.function)
  return `${code}\nimport json as _j, sys as _s\n_f = globals().get(${fn}) or getattr(globals()['Solution'](), ${fn})\n_r = _f(*_j.loads(${JSON.stringify(JSON.stringify(call.args))}))\n_s.stdout.write('\\n@@fake-judge@@' + _j.dumps(_r) + '\\n')\n`
}

/** A judge of `req` on the host's python3 through `run` (see the module comment). */
export function pythonJudge(run: RunPython): FakeJudgeBehavior {
  return async (req) => {
    const problem = judgeRequestProblem(req)
    const language = req.language ?? 'python'
    if (problem !== undefined)
      return failedJudgeResult(
        'invalid_request',
        language,
        'SF_ERR_FAKE_INVALID',
        `${problem.field}: ${problem.message}`
      )
    const r = resolveJudgeRequest(req)
    if (r.language !== 'python' || r.compare.kind === 'checker')
      return failedJudgeResult(
        'invalid_request',
        language,
        'SF_ERR_FAKE_LANGUAGE',
        `language: the fake fleet judges python only`
      )
    const started = Date.now()
    const tests: JudgeResult['tests'] = []
    let verdict: JudgeResult['verdict'] = 'accepted'
    let passed = 0
    for (const test of r.tests) {
      if (verdict !== 'accepted' && !r.run_all) {
        tests.push({ verdict: 'skipped' })
        continue
      }
      const out = await run(test.call === undefined ? r.code : callProgram(r.code, test.call), test.stdin, r.timeout_ms)
      let stdout = out.stdout
      let returned: unknown
      const marker = stdout.lastIndexOf('\n@@fake-judge@@')
      if (test.call !== undefined && marker >= 0) {
        returned = JSON.parse(stdout.slice(marker + '\n@@fake-judge@@'.length))
        stdout = stdout.slice(0, marker)
      }
      const expected = test.expected
      const right =
        expected === undefined
          ? true
          : 'text' in expected
            ? sameText(r.compare, stdout, expected.text)
            : JSON.stringify(returned) === JSON.stringify(expected.json) ||
              ('or' in expected && JSON.stringify(returned) === JSON.stringify(expected.or))
      const result: JudgeTestResult = {
        verdict:
          out.status === 'timeout'
            ? 'time_limit'
            : out.status !== 'ok'
              ? 'runtime_error'
              : right
                ? 'accepted'
                : 'wrong_answer',
        stdout,
        stderr: out.stderr,
        exit_code: out.exit_code,
        duration_ms: out.duration_ms
      }
      if (test.call !== undefined && returned !== undefined) result.returned = returned
      tests.push(result)
      if (result.verdict === 'accepted') passed++
      else if (verdict === 'accepted') verdict = result.verdict
    }
    return {
      verdict,
      passed,
      total: r.tests.length,
      language: 'python',
      compile: { status: 'ok', stdout: '', stderr: '', exit_code: 0, duration_ms: 0, cached: false },
      tests,
      duration_ms: Date.now() - started,
      queue_ms: 0,
      runner: 'fake',
      sandbox: 'fake-0',
      ...(r.request_id === undefined ? {} : { request_id: r.request_id })
    }
  }
}
