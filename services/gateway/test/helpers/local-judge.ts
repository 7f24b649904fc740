/**
 * A judge for gateway tests that really compiles and runs (g++, gcc, python3 on this machine, in a temporary
 * directory; no sandbox: tests only), so the compatible APIs' shapes are held to what a compiler and a program
 * really say (a compiler's message, an assertion's SIGABRT, a time limit) without a runner. It keeps the contract's
 * verdicts for stdin tests compared by lines, exact or tokens; the runner's own judge is tested on the real fleet.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  compileArgv,
  failedJudgeResult,
  judgeLanguageRow,
  judgeRequestProblem,
  resolveJudgeRequest,
  type JudgeCompileResult,
  type JudgeRequest,
  type JudgeResult,
  type JudgeTestResult,
  type ResolvedCompare
} from '@sandfleet/protocol'

interface Run {
  stdout: string
  stderr: string
  code: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  ms: number
}

/** Runs `argv` in `cwd` with `stdin`, killed at `timeoutMs`. */
async function run(argv: string[], cwd: string, stdin: string, timeoutMs: number): Promise<Run> {
  const started = performance.now()
  const child = spawn(argv[0] as string, argv.slice(1), { cwd, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdin.on('error', () => {})
  child.stdin.end(stdin)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, timeoutMs)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on('close', (c, s) => resolve([c, s]))
  )
  clearTimeout(timer)
  return { stdout, stderr, code, signal, timedOut, ms: performance.now() - started }
}

/** The contract's comparisons that need no checker. */
function same(compare: ResolvedCompare, out: string, expected: string): boolean {
  const lines = (s: string): string[] => {
    const l = s
      .replace(/\r\n/g, '\n')
      .split('\n')
      .map((x) => x.trimEnd())
    while (l.length > 0 && l[l.length - 1] === '') l.pop()
    return l
  }
  switch (compare.kind) {
    case 'exact':
      return out === expected
    case 'tokens':
      return out.split(/\s+/).filter(Boolean).join(' ') === expected.split(/\s+/).filter(Boolean).join(' ')
    default:
      return lines(out).join('\n') === lines(expected).join('\n')
  }
}

/** Judges `request` on this machine (see the module comment); a request the contract refuses is `invalid_request`. */
export async function localJudge(request: JudgeRequest): Promise<JudgeResult> {
  const problem = judgeRequestProblem(request)
  const row = judgeLanguageRow(request.language ?? 'python')
  if (problem !== undefined || row === undefined || row.runtime === 'javascript')
    return failedJudgeResult(
      'invalid_request',
      request.language ?? 'python',
      'SF_ERR_RUNNER_LANGUAGE',
      problem === undefined
        ? `language: ${String(request.language)} is not judged here`
        : `${problem.field}: ${problem.message}`
    )
  const r = resolveJudgeRequest(request)
  const dir = await mkdtemp(join(tmpdir(), 'sf-judge-'))
  const started = performance.now()
  const base = { language: r.language, runner: 'local-judge', sandbox: 'local-0', queue_ms: 0 }
  try {
    await writeFile(join(dir, row.source), r.code)
    let compile: JudgeCompileResult | null = null
    const argv = compileArgv(row)
    if (argv !== undefined) {
      const c = await run(argv, dir, '', r.compile_timeout_ms)
      const status = c.timedOut ? 'time_limit' : c.code === 0 ? 'ok' : 'error'
      compile = {
        status,
        stdout: c.stdout,
        stderr: c.stderr,
        exit_code: c.timedOut ? null : c.code,
        duration_ms: c.ms,
        cached: false
      }
    } else {
      const c = await run(
        ['python3', '-c', 'import sys; compile(open(sys.argv[1]).read(), "main.py", "exec")', row.source],
        dir,
        '',
        r.compile_timeout_ms
      )
      compile = {
        status: c.code === 0 ? 'ok' : 'error',
        stdout: '',
        stderr: c.stderr,
        exit_code: c.code,
        duration_ms: c.ms,
        cached: false
      }
    }
    if (compile.status !== 'ok')
      return {
        ...base,
        verdict: 'compile_error',
        passed: 0,
        total: r.tests.length,
        compile,
        tests: r.tests.map(() => ({ verdict: 'skipped' as const })),
        error: { type: 'compile_error', message: `the compile step ended ${compile.status}` },
        duration_ms: performance.now() - started
      }
    const tests: JudgeResult['tests'] = []
    let verdict: JudgeResult['verdict'] = 'accepted'
    let passed = 0
    for (const test of r.tests) {
      if (verdict !== 'accepted' && !r.run_all) {
        tests.push({ verdict: 'skipped' })
        continue
      }
      const x = await run(row.run as string[], dir, test.stdin, r.timeout_ms)
      const expected = test.expected !== undefined && 'text' in test.expected ? test.expected.text : undefined
      const result: JudgeTestResult = {
        verdict: x.timedOut
          ? 'time_limit'
          : x.code !== 0
            ? 'runtime_error'
            : expected === undefined || same(r.compare, x.stdout, expected)
              ? 'accepted'
              : 'wrong_answer',
        stdout: x.stdout,
        stderr: x.stderr,
        exit_code: x.timedOut || x.signal !== null ? null : x.code,
        duration_ms: x.ms
      }
      if (x.signal !== null && !x.timedOut) result.signal = x.signal
      tests.push(result)
      if (result.verdict === 'accepted') passed++
      else if (verdict === 'accepted') verdict = result.verdict
    }
    return {
      ...base,
      verdict,
      passed,
      total: r.tests.length,
      compile,
      tests,
      duration_ms: performance.now() - started
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
