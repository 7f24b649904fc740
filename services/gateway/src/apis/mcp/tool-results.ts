/**
 * An `ExecResult` as an MCP tool result, apart from the SDK (mcp.ts answers a call over the
 * deployment's limits with one before the SDK is loaded).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { isRetriableVerdict, type ExecResult, type JudgeResult } from '@sandfleet/protocol'

/**
 * An ExecResult as an MCP tool result: `status`, `stdout` and `stderr` as structured content and
 * as text; a status other than `ok` is marked `isError`.
 */
export function toToolResult(result: ExecResult): CallToolResult {
  const structured: Record<string, unknown> = {
    status: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    exit_code: result.exit_code,
    duration_ms: result.duration_ms
  }
  if (result.cpu_ms !== undefined) structured.cpu_ms = result.cpu_ms
  if (result.error !== null) structured.error = result.error
  if (result.display !== undefined) structured.display = result.display
  const parts = [`status: ${result.status}`]
  if (result.stdout !== '') parts.push(`stdout:\n${result.stdout}`)
  if (result.stderr !== '') parts.push(`stderr:\n${result.stderr}`)
  for (const d of result.display ?? []) if (d['text/plain'] !== undefined) parts.push(`result: ${d['text/plain']}`)
  if (result.error !== null && result.status !== 'error')
    parts.push(`error: ${result.error.type}: ${result.error.message}`)
  return {
    content: [{ type: 'text', text: parts.join('\n') }],
    structuredContent: structured,
    isError: result.status !== 'ok'
  }
}

/** The most characters of a failing test's output a judge's text shows (its structured content has them all). */
const SHOWN_CHARS = 2000

const shown = (text: string): string =>
  text.length <= SHOWN_CHARS ? text : `${text.slice(0, SHOWN_CHARS)}… (${text.length - SHOWN_CHARS} more characters)`

/**
 * A JudgeResult as an MCP tool result: the verdict, tests passed of total, the compile step and each test's verdict as
 * structured content; as text, the verdict, the compiler's messages when it failed and the first failing test's
 * output. A verdict on the program is the tool's answer; only the fleet's verdicts and a refused request are marked
 * `isError`.
 */
export function toJudgeToolResult(result: JudgeResult): CallToolResult {
  const structured: Record<string, unknown> = {
    verdict: result.verdict,
    passed: result.passed,
    total: result.total,
    language: result.language,
    compile: result.compile,
    tests: result.tests,
    duration_ms: result.duration_ms
  }
  if (result.error !== undefined) structured.error = result.error
  const parts = [`verdict: ${result.verdict} (${result.passed}/${result.total} tests passed)`]
  if (result.compile !== null && result.compile.status !== 'ok')
    parts.push(`compile: ${result.compile.status}\n${shown(result.compile.stderr)}`)
  const failing = result.tests.findIndex((t) => t.verdict !== 'accepted' && t.verdict !== 'skipped')
  const test = result.tests[failing]
  if (test !== undefined && test.verdict !== 'skipped') {
    parts.push(`test ${failing + 1}: ${test.verdict}`)
    if (test.stdout !== '') parts.push(`stdout:\n${shown(test.stdout)}`)
    if (test.stderr !== '') parts.push(`stderr:\n${shown(test.stderr)}`)
  }
  const refused = isRetriableVerdict(result.verdict) || result.verdict === 'invalid_request'
  if (refused && result.error !== undefined) parts.push(`error: ${result.error.type}: ${result.error.message}`)
  return { content: [{ type: 'text', text: parts.join('\n') }], structuredContent: structured, isError: refused }
}
