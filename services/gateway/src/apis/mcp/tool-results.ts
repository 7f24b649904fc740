/**
 * An `ExecResult` as an MCP tool result, apart from the SDK (mcp.ts answers a call over the
 * deployment's limits with one before the SDK is loaded).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ExecResult } from '@sandfleet/protocol'

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
