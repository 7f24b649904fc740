/**
 * {@link runChatEpisode}: the multi-turn loop over a text-in / text-out {@link ChatEngine}
 * (`/v1/chat/completions`), for evaluation and agents where no token ids are needed. Tool results
 * go back as a message (`user` by default, as rStar2-Agent's template renders them, or `tool`);
 * turns, tool calls with their statuses and the stop reason are as in {@link runEpisode}.
 */
import type { ChatEngine, ChatMessage, SamplingParams, ToolSchema } from '../engine/engine.ts'
import type { ToolCallFormat } from '../tools/parse.ts'
import { countAnswers } from './answer-tags.ts'
import { defaultHasAnswer } from './run-episode.ts'
import type { ToolExecutor, ToolStepOptions } from './tool-step.ts'
import { endTurn, throwIfAborted, turnStops } from './tool-turn.ts'
import type { StopReason, ToolCallRecord, TurnRecord } from './trajectory.ts'

/** Options of {@link runChatEpisode}. */
export interface ChatEpisodeOptions extends ToolStepOptions {
  engine: ChatEngine
  fleet: ToolExecutor
  messages: readonly ChatMessage[]
  /** Tool schemas sent with every turn, for the server's chat template to present (e.g. RSTAR2_PYTHON_TOOL). */
  tools?: readonly ToolSchema[]
  format?: ToolCallFormat
  /** Role of the message carrying tool results (default `user`). */
  toolRole?: 'user' | 'tool'
  maxTurns?: number
  /** Most tokens per model turn (default 4096). */
  maxTokensPerTurn?: number
  sampling?: Omit<SamplingParams, 'maxTokens'>
  hasAnswer?: (turnText: string) => boolean
  signal?: AbortSignal
}

/** What {@link runChatEpisode} returns. */
export interface ChatTrajectory {
  /** The whole conversation: the prompt, then assistant and tool-result messages. */
  messages: ChatMessage[]
  turns: TurnRecord[]
  toolCalls: ToolCallRecord[]
  /** `token_budget` does not occur here; a turn cut by `maxTokensPerTurn` ends as `turn_length`. */
  stopReason: StopReason
  answers: number
  wallMs: number
}

/** Runs one chat episode. */
export async function runChatEpisode(options: ChatEpisodeOptions): Promise<ChatTrajectory> {
  const started = Date.now()
  const { engine, fleet, signal } = options
  const format = options.format ?? 'hermes'
  const stop = turnStops(options.sampling, format, options.maxParallelCalls)
  const rules = {
    fleet,
    format,
    maxTurns: options.maxTurns ?? 10,
    hasAnswer: options.hasAnswer ?? defaultHasAnswer,
    step: options,
    ...(signal ? { signal } : {})
  }
  const messages: ChatMessage[] = [...options.messages]
  const turns: TurnRecord[] = []
  const toolCalls: ToolCallRecord[] = []
  let stopReason: StopReason | undefined
  while (stopReason === undefined) {
    throwIfAborted(signal)
    const gen = await engine.chat(messages, {
      ...options.sampling,
      maxTokens: options.maxTokensPerTurn ?? 4096,
      stop,
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(signal ? { signal } : {})
    })
    messages.push({ role: 'assistant', content: gen.text })
    const turn: TurnRecord = {
      text: gen.text,
      modelTokens: gen.logprobs.length,
      toolTokens: 0,
      toolText: '',
      finishReason: gen.finishReason,
      stoppedBy: null,
      toolStatuses: []
    }
    turns.push(turn)
    const ended = await endTurn(turn, turns.length - 1, 'turn_length', rules, toolCalls)
    if (!Array.isArray(ended)) {
      stopReason = ended
      break
    }
    turn.toolText = ended.map((r) => r.text).join('\n')
    messages.push({ role: options.toolRole ?? 'user', content: turn.toolText })
  }
  return {
    messages,
    turns,
    toolCalls,
    stopReason,
    answers: countAnswers(turns.map((t) => t.text)),
    wallMs: Date.now() - started
  }
}
