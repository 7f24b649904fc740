/**
 * What a run in a sandbox earns: a compile step's status, a test's verdict (its limits first, then its output against
 * the expected one, or its checker's word), and the parts of a {@link JudgeResult} built from them. Pure functions of
 * what the sandbox said and what the caller expects; the runner calls them as each run's frame comes in.
 */
import type {
  CompileStatus,
  JudgeCompileResult,
  JudgeTestResult,
  ResolvedCompare,
  ResolvedJudgeTest,
  TestVerdict
} from '@sandfleet/protocol'
import type { JudgeRun, JudgeTested } from '../sandbox/contract.ts'
import type { CachedCompile } from './compile-cache.ts'
import { meetsExpected } from './compare.ts'

/** What a C++ program that ran out of memory says as it dies (its allocation threw, nothing caught it). */
const BAD_ALLOC = /std::bad_alloc/
/** What a compiler says when it ran out of memory. */
const COMPILER_OUT_OF_MEMORY = /out of memory allocating|virtual memory exhausted|cannot allocate memory/i

/** How a compile step ended. */
export function compileStatusOf(run: JudgeRun): CompileStatus {
  switch (run.status) {
    case 'ok':
      return 'ok'
    case 'timeout':
      return 'time_limit'
    case 'memory':
      return 'memory_limit'
    default:
      return COMPILER_OUT_OF_MEMORY.test(run.stderr) ? 'memory_limit' : 'error'
  }
}

/** A compile step as the result reports it. */
export function compileResultOf(run: JudgeRun): JudgeCompileResult {
  const result: JudgeCompileResult = {
    status: compileStatusOf(run),
    stdout: run.stdout,
    stderr: run.stderr,
    exit_code: run.exit_code,
    duration_ms: run.duration_ms,
    cached: false
  }
  if (run.cpu_ms !== undefined) result.cpu_ms = run.cpu_ms
  return result
}

/**
 * A compile step the compile cache answered (nothing ran), with what the compile that made its binary cost: `ok`, or
 * `time_limit` when that compile took longer than `compileTimeoutMs` (what a compile of it under that limit would end).
 */
export function cachedCompile(cost: CompileCost, compileTimeoutMs: number): JudgeCompileResult {
  const result: JudgeCompileResult = {
    status: pastCompileLimit(cost, compileTimeoutMs) ? 'time_limit' : 'ok',
    stdout: '',
    stderr: '',
    exit_code: null,
    duration_ms: cost.duration_ms,
    cached: true
  }
  if (cost.cpu_ms !== undefined) result.cpu_ms = cost.cpu_ms
  return result
}

/** What a compile cost, as the compile cache keeps it. */
export type CompileCost = Pick<CachedCompile, 'duration_ms' | 'cpu_ms'>

/**
 * Whether a compile that cost `cost` would not fit in `compileTimeoutMs`: its wall time past it (the executor stops a
 * compile at its wall deadline; its CPU limit is only a backstop past that).
 */
export function pastCompileLimit(cost: CompileCost, compileTimeoutMs: number): boolean {
  return cost.duration_ms > compileTimeoutMs
}

/** The verdict of a run whose limits or exit say it failed, whatever it printed; undefined when it ended well. */
export function limitVerdictOf(run: JudgeRun): TestVerdict | undefined {
  if (run.truncated.stdout) return 'output_limit'
  switch (run.status) {
    case 'ok':
      return undefined
    case 'timeout':
      return 'time_limit'
    case 'memory':
      return 'memory_limit'
    case 'killed':
      return BAD_ALLOC.test(run.stderr) ? 'memory_limit' : 'runtime_error'
    default:
      return run.error?.type === 'MemoryError' || BAD_ALLOC.test(run.stderr) ? 'memory_limit' : 'runtime_error'
  }
}

/** A call test's return value, parsed; undefined when there is none (not JSON, too long, or unparseable). */
export function returnedOf(tested: JudgeTested): unknown {
  if (tested.returned === undefined) return undefined
  try {
    return JSON.parse(tested.returned) as unknown
  } catch {
    return undefined
  }
}

/** Why a checker's run says nothing of the program (it did not end with an exit status), or undefined. */
export function checkerFault(tested: JudgeTested): string | undefined {
  const c = tested.checker
  if (c === undefined || c.status === 'ok' || c.status === 'error') return undefined
  return `the checker ${c.status === 'timeout' ? 'ran past its time limit' : `did not end well (${c.error?.type ?? c.status})`} on test ${tested.index}`
}

/** A test's verdict: its limits and exit, then its output against `test.expected` (or its checker's exit status). */
export function testVerdictOf(tested: JudgeTested, test: ResolvedJudgeTest, compare: ResolvedCompare): TestVerdict {
  const failed = limitVerdictOf(tested)
  if (failed !== undefined) return failed
  if (tested.checker !== undefined) return tested.checker.status === 'ok' ? 'accepted' : 'wrong_answer'
  if (test.call !== undefined && tested.returned === undefined && test.expected !== undefined) return 'wrong_answer'
  if (test.expected === undefined) return 'accepted'
  return meetsExpected(compare, test.expected, { stdout: tested.stdout, returned: returnedOf(tested) })
    ? 'accepted'
    : 'wrong_answer'
}

/** `text` cut to `maxBytes` of UTF-8 (whole characters), and whether it was. */
function cut(text: string, maxBytes: number): [string, boolean] {
  if (text.length <= maxBytes / 4 || Buffer.byteLength(text) <= maxBytes) return [text, false]
  return [
    Buffer.from(text)
      .subarray(0, maxBytes)
      .toString('utf8')
      .replace(/\uFFFD$/, ''),
    true
  ]
}

/** A test that ran, as the result reports it: its output cut to `echoBytes` (the runner's `maxOutputBytes`). */
export function testResultOf(tested: JudgeTested, verdict: TestVerdict, echoBytes: number): JudgeTestResult {
  const [stdout, outCut] = cut(tested.stdout, echoBytes)
  const [stderr, errCut] = cut(tested.stderr, echoBytes)
  const result = {
    verdict: verdict as JudgeTestResult['verdict'],
    stdout,
    stderr,
    exit_code: tested.exit_code,
    duration_ms: tested.duration_ms
  } as JudgeTestResult
  if (tested.status === 'killed' && tested.error?.type.startsWith('SIG') === true) result.signal = tested.error.type
  if (tested.cpu_ms !== undefined) result.cpu_ms = tested.cpu_ms
  const truncated = { stdout: outCut || tested.truncated.stdout, stderr: errCut || tested.truncated.stderr }
  if (truncated.stdout || truncated.stderr) result.truncated = truncated
  if (tested.returned !== undefined) result.returned = returnedOf(tested)
  if (tested.checker !== undefined) {
    const c = tested.checker
    result.checker = {
      exit_code: c.exit_code,
      stdout: cut(c.stdout, echoBytes)[0],
      stderr: cut(c.stderr, echoBytes)[0]
    }
  }
  if (verdict !== 'accepted' && verdict !== 'wrong_answer' && tested.error !== null)
    result.error = { type: tested.error.type, message: tested.error.message }
  else if (tested.returned_error !== undefined) result.error = { type: 'ReturnValue', message: tested.returned_error }
  return result
}
