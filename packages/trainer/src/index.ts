/**
 * `@sandfleet/trainer`: agentic RL rollouts on sandfleet. This first part parses tool calls and
 * formats results for the model.
 *
 * @example
 * ```ts
 * import { parseToolCalls, formatToolResult } from '@sandfleet/trainer'
 * const [call] = parseToolCalls('<tool_call>{"name":"python","arguments":{"code":"print(1)"}}</tool_call>', 'hermes')
 * const text = call.ok ? formatToolResult(await client.execute({ code: call.code, stdin: call.stdin }), 'rstar2')
 *                      : formatToolResult({ parseError: call.reason }, 'rstar2')
 * ```
 */
export * from './tools/parse.ts'
export * from './tools/format.ts'
export * from './algo/advantages.ts'
export * from './algo/grpo-roc.ts'
