/**
 * The end of one model turn, the same in both episode loops ({@link runEpisode} over token ids,
 * {@link runChatEpisode} over messages): the turn stops the episode, or its tool calls are run
 * through the fleet and their records feed the next turn.
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { SamplingParams } from '../engine/engine.ts'
import { parseToolCalls, toolCallStops, type ToolCallFormat } from '../tools/parse.ts'
import { runToolStep, type ToolExecutor, type ToolStepOptions } from './tool-step.ts'
import type { StopReason, ToolCallRecord, TurnRecord } from './trajectory.ts'

/** How an episode ends its turns. */
export interface TurnRules {
  fleet: ToolExecutor
  format: ToolCallFormat
  maxTurns: number
  hasAnswer: (turnText: string) => boolean
  step: ToolStepOptions
  signal?: AbortSignal
}

/** The stop strings of a generation: the caller's and those that end the format's tool calls. */
export function turnStops(
  sampling: Omit<SamplingParams, 'maxTokens'> | undefined,
  format: ToolCallFormat,
  maxParallelCalls: number | undefined
): string[] {
  return [...new Set([...(sampling?.stop ?? []), ...toolCallStops(format, maxParallelCalls ?? 1)])]
}

/** Throws the episode's abort when `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new TrainerError(TRAINER_ERROR_CODES.ABORTED, 'the episode was aborted', 499, { cause: signal.reason })
}

/**
 * Ends the turn `turn` (the `index`-th): the reason the episode stops (`cut` when the turn hit its
 * length limit; an answer or EOS without a tool call; the turn limit), or the records of the tool
 * calls it made, run through the fleet, added to `toolCalls` and noted on the turn.
 */
export async function endTurn(
  turn: TurnRecord,
  index: number,
  cut: StopReason,
  rules: TurnRules,
  toolCalls: ToolCallRecord[]
): Promise<StopReason | ToolCallRecord[]> {
  if (turn.finishReason === 'length') return cut
  const calls = parseToolCalls(turn.text, rules.format)
  if (calls.length === 0) return rules.hasAnswer(turn.text) ? 'answer' : 'eos'
  if (index + 1 >= rules.maxTurns) return 'max_turns'
  const records = await runToolStep(rules.fleet, calls, index, rules.step, rules.signal)
  toolCalls.push(...records)
  turn.toolStatuses = records.map((r) => r.status)
  return records
}
