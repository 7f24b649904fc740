/**
 * GRPO-RoC's penalties of one rollout (rStar2-Agent report §2.2.3), p_err and p_format, each in
 * two versions: ours, from what the rollout loop recorded (the statuses of its tool calls, its
 * answer blocks and assistant turns: the report's definitions), and the released code's
 * (microsoft/rStar, `rstar2_agent/`), read from the response text as its tokenizer decodes it.
 */
import { isRetriable, isToolError, type Status } from '@sandfleet/protocol'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'

/** What RoC needs of one rollout. */
export interface RocRollout {
  reward: number
  /** Statuses of its tool calls (`parse_error` for calls that did not parse). */
  toolStatuses: ReadonlyArray<Status | 'parse_error'>
  /** Closed `<answer>…</answer>` blocks in the model's turns. */
  answers: number
  /** Assistant turns. */
  turns: number
  /** `<answer>` and `</answer>` tags do not pair up (an answer left open): p_format is 1. */
  unbalancedAnswerTags?: boolean
  /**
   * The response (model turns, tool turns and the chat markers between them) as the tokenizer
   * decodes its ids, special tokens kept: what the released code reads. Needed by the
   * `substring` error count and by `deterministic` mode's p_format ({@link decodedResponseText}
   * gives it for a trajectory).
   */
  responseText?: string
}

/**
 * How p_err counts a tool error: `status`, by the status of each call (ours: the report's
 * definition; a clean run that prints "error" is no error, a kill or a timeout is one, fleet
 * faults are left out), or `substring`, as the released code does (a `<tool_response>` block
 * whose lowercased text contains "error").
 */
export type ErrorCountRule = 'status' | 'substring'

/** The error-count rules, for flag validation. */
export const ERROR_COUNT_RULES: readonly ErrorCountRule[] = Object.freeze(['status', 'substring'])

/** The response text of `r`, which `what` reads; a caller that left it out is told so. */
export function responseTextOf(r: RocRollout, what: string): string {
  if (r.responseText === undefined)
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `${what} reads the response text: give each RocRollout its responseText`,
      400
    )
  return r.responseText
}

/**
 * p_err by status: tool calls whose status is an error (the code's statuses other than ok, and
 * parse failures) over tool calls; fleet statuses are the fleet's fault and are left out of both
 * counts. 0.5 when there is no tool call.
 */
export function statusErrorPenalty(r: RocRollout): number {
  const counted = r.toolStatuses.filter((s) => s === 'parse_error' || !isRetriable(s))
  if (counted.length === 0) return 0.5
  return counted.filter((s) => s === 'parse_error' || isToolError(s)).length / counted.length
}

const TOOL_RESPONSE = /<tool_response>[\s\S]*?<\/tool_response>/g

/**
 * p_err as the released code counts it: `<tool_response>…</tool_response>` blocks of the response
 * text whose lowercased text contains "error", over the blocks; 0.5 when there is none.
 */
export function substringErrorPenalty(responseText: string): number {
  const blocks = responseText.match(TOOL_RESPONSE) ?? []
  if (blocks.length === 0) return 0.5
  return blocks.filter((b) => b.toLowerCase().includes('error')).length / blocks.length
}

/** p_err of `r` under `rule` (default `status`). */
export function errorPenalty(r: RocRollout, rule: ErrorCountRule = 'status'): number {
  return rule === 'substring'
    ? substringErrorPenalty(responseTextOf(r, 'the substring error count'))
    : statusErrorPenalty(r)
}

/**
 * p_format, ours (the report's formula over the rollout's assistant turns): 1 when there is no
 * closed `<answer>` block (a `\boxed{}` alone is no answer block) or the tags do not pair up,
 * else min(1, (#answers − 1) / #turns).
 */
export function formatPenalty(r: RocRollout): number {
  if (r.answers === 0 || r.turns === 0 || r.unbalancedAnswerTags === true) return 1
  return Math.min(1, (r.answers - 1) / r.turns)
}

const ANSWER_BLOCK = /<answer>[\s\S]*?<\/answer>/g
const ASSISTANT_SPAN = /<\|im_start\|>assistant[\s\S]*?<\|im_end\|>/g

function occurrences(text: string, tag: string): number {
  return text.split(tag).length - 1
}

/**
 * p_format as the released code computes it from the response text: 1 when `<answer>` or
 * `</answer>` is missing, when either tag's count differs from the closed blocks', or when the
 * text holds no `<|im_start|>assistant … <|im_end|>` span; else min(1, (#blocks − 1) / #spans).
 * The first assistant turn opens in the prompt, so a one-turn answer has no span (p_format 1),
 * and an answer after one tool call has one.
 */
export function releasedFormatPenalty(responseText: string): number {
  if (!responseText.includes('<answer>') || !responseText.includes('</answer>')) return 1
  const closed = responseText.match(ANSWER_BLOCK)?.length ?? 0
  if (occurrences(responseText, '<answer>') !== closed || occurrences(responseText, '</answer>') !== closed) return 1
  const spans = responseText.match(ASSISTANT_SPAN)?.length ?? 0
  if (spans === 0) return 1
  return Math.min((closed - 1) / spans, 1)
}
