/** The trajectory of one episode: token ids with a loss mask and logprobs, turns, tool calls. */
import type { ExecResult, Status } from '@sandfleet/protocol'
import type { FinishReason } from '../engine/engine.ts'
import type { RocRollout } from '../algo/roc-penalties.ts'
import { answerTagsBalanced } from './answer-tags.ts'

/** Why an episode ended. */
export type StopReason =
  /** A turn without tool calls that holds an answer. */
  | 'answer'
  /** A turn without tool calls and without an answer (EOS or a stop string). */
  | 'eos'
  /** The turn limit was reached while the model still called tools. */
  | 'max_turns'
  /** The response token budget (model and tool tokens) ran out. */
  | 'token_budget'
  /** One turn hit its own `maxTokensPerTurn` before the budget. */
  | 'turn_length'

/** Status of one tool call: the fleet's status, or `parse_error` for a call that did not parse. */
export type ToolCallStatus = Status | 'parse_error'

/** One tool call and what came of it. */
export interface ToolCallRecord {
  /** Index of the model turn that made it. */
  turn: number
  status: ToolCallStatus
  /** The code (empty for a parse error). */
  code: string
  stdin: string
  /** What the model was told (formatted, truncated). */
  text: string
  /** Why it did not parse, for `parse_error`. */
  parseError?: string
  /** The fleet's result, for calls that ran. */
  result?: ExecResult
  /** Wall time of the call as the episode saw it, ms. */
  wallMs: number
}

/** One model turn. */
export interface TurnRecord {
  /** The generated text. */
  text: string
  /** Model tokens generated in this turn. */
  modelTokens: number
  /** Tool-output tokens appended after this turn (0 when none). */
  toolTokens: number
  /** The text appended after this turn: its tool results in the turn template ('' when none). */
  toolText: string
  finishReason: FinishReason
  stoppedBy: string | null
  /** Statuses of this turn's tool calls, in order. */
  toolStatuses: ToolCallStatus[]
}

/** What {@link runEpisode} returns. */
export interface Trajectory {
  promptIds: number[]
  /** Model and tool tokens after the prompt, in order. */
  responseIds: number[]
  /** One per response token: 1 for tokens the policy generated, 0 for tool output and templates. */
  lossMask: number[]
  /** One per response token: the sampled token's logprob, 0 where the mask is 0. */
  logprobs: number[]
  /** The response as text (model turns and tool turns). */
  responseText: string
  turns: TurnRecord[]
  toolCalls: ToolCallRecord[]
  stopReason: StopReason
  /** Closed `<answer>` blocks in the model's text (for GRPO-RoC's p_format; a `\boxed{}` alone does not count). */
  answers: number
  /** Wall time of the episode, ms. */
  wallMs: number
}

/** ChatML's end of turn: the end-of-sequence token of the models the released rStar2-Agent code trains. */
const CHATML_END = '<|im_end|>'

/**
 * The response as a ChatML tokenizer decodes its ids, special tokens kept (the text the released
 * rStar2-Agent code reads): the turns and what followed each, a turn that ended with the
 * end-of-turn token closed by `<|im_end|>` (an engine leaves that token's text out of the text it
 * returns, or keeps it).
 */
export function decodedResponseText(t: Trajectory): string {
  return t.turns
    .map((turn) => {
      const eos = turn.finishReason === 'stop' && turn.stoppedBy === null && !turn.text.endsWith(CHATML_END)
      return turn.text + (eos ? CHATML_END : '') + turn.toolText
    })
    .join('')
}

/** The fields GRPO-RoC reads, from a trajectory and its reward. */
export function toRocRollout(t: Trajectory, reward: number): RocRollout {
  const texts = t.turns.map((turn) => turn.text)
  return {
    reward,
    toolStatuses: t.toolCalls.map((c) => c.status),
    answers: t.answers,
    turns: t.turns.length,
    unbalancedAnswerTags: !answerTagsBalanced(texts),
    responseText: decodedResponseText(t)
  }
}

/** The model's text only (every turn, no tool output), where the final answer is looked for. */
export function modelText(t: Trajectory): string {
  return t.turns.map((turn) => turn.text).join('')
}
