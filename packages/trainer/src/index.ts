/**
 * `@sandfleet/trainer`: agentic RL rollouts on sandfleet: tool-call parsing and result
 * formatting, engine adapters (vLLM / SGLang OpenAI-compatible servers), GRPO-style algorithms.
 *
 * @example
 * ```ts
 * import { CompletionsEngine, parseToolCalls, formatToolResult } from '@sandfleet/trainer'
 * const engine = new CompletionsEngine({ url: 'http://127.0.0.1:8000', model: 'qwen' })
 * const promptIds = await engine.applyChatTemplate([{ role: 'user', content: 'What is 2**10?' }])
 * const gen = await engine.generate({ promptIds, maxTokens: 512, stop: ['</tool_call>'] })
 * const [call] = parseToolCalls(gen.text, 'hermes')
 * const text = call.ok ? formatToolResult(await client.execute({ code: call.code, stdin: call.stdin }), 'rstar2')
 *                      : formatToolResult({ parseError: call.reason }, 'rstar2')
 * ```
 */
export * from './errors.ts'
export * from './tools/parse.ts'
export * from './tools/format.ts'
export * from './algo/advantages.ts'
export * from './algo/grpo-roc.ts'
export * from './engine/engine.ts'
export * from './engine/openai-completions.ts'
export * from './engine/openai-chat.ts'
export * from './rollout/trajectory.ts'
export * from './rollout/turn-template.ts'
export * from './rollout/tool-step.ts'
export * from './rollout/run-episode.ts'
export * from './rollout/episode-session.ts'
export * from './rollout/run-chat-episode.ts'
export * from './reward/extract-answer.ts'
export * from './reward/normalize-answer.ts'
export * from './reward/math-reward.ts'
export * from './schedule/pick-engine.ts'
export * from './schedule/engine-metrics.ts'
export * from './schedule/kv-scheduler.ts'
export * from './export/jsonl.ts'
export * from './rollout/run-dataset.ts'
export * from './cli/rollout-command.ts'
