/**
 * `@sandfleet/trainer`: agentic RL rollouts on sandfleet. Engine adapters (vLLM / SGLang
 * OpenAI-compatible servers), the multi-turn rollout loop with loss masks, tool-call parsing and
 * result formatting, the math answer reward, the code reward (a program judged by the fleet against its tests: APPS,
 * TACO, LiveCodeBench), GRPO-style algorithms and GRPO-RoC, a
 * scheduler over several engines, JSONL export and the `sandfleet rollout` command.
 *
 * @example
 * ```ts
 * import { SandfleetClient } from '@sandfleet/client'
 * import { CompletionsEngine, runEpisode, mathReward, modelText } from '@sandfleet/trainer'
 * const engine = new CompletionsEngine({ url: 'http://127.0.0.1:8000', model: 'qwen' })
 * const fleet = new SandfleetClient({ url: 'http://127.0.0.1:8080' })
 * const t = await runEpisode({ engine, fleet, prompt: [{ role: 'user', content: 'What is 2**10?' }] })
 * // t.responseIds, t.lossMask (1 policy / 0 tool output) and t.logprobs line up one to one
 * console.log(t.stopReason, t.toolCalls.map((c) => c.status), mathReward(modelText(t), '1024').reward)
 * ```
 */
export * from './errors.ts'
export * from './tools/parse.ts'
export * from './tools/format.ts'
export * from './algo/advantages.ts'
export * from './algo/roc-penalties.ts'
export * from './algo/grpo-roc.ts'
export * from './algo/seeded-random.ts'
export * from './engine/engine.ts'
export * from './engine/chatml.ts'
export * from './engine/openai-completions.ts'
export * from './engine/openai-chat.ts'
export * from './engine/sglang-generate.ts'
export * from './engine/retrying-engine.ts'
export * from './engine/scripted-engine.ts'
export * from './engine/arithmetic-model.ts'
export * from './rollout/answer-tags.ts'
export * from './rollout/trajectory.ts'
export * from './rollout/turn-template.ts'
export * from './rollout/tool-step.ts'
export * from './rollout/run-episode.ts'
export * from './rollout/episode-session.ts'
export * from './rollout/run-chat-episode.ts'
export * from './reward/extract-answer.ts'
export * from './reward/normalize-answer.ts'
export * from './reward/answer-forms.ts'
export * from './reward/math-reward.ts'
export * from './reward/code-reward.ts'
export * from './rollout/code-dataset.ts'
export * from './schedule/pick-engine.ts'
export * from './schedule/engine-metrics.ts'
export * from './schedule/kv-scheduler.ts'
export * from './export/jsonl.ts'
export * from './export/npz.ts'
export * from './export/tensors.ts'
export * from './rollout/run-dataset.ts'
export * from './rollout/presets.ts'
export * from './cli/rollout-command.ts'
