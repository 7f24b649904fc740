/**
 * Rollouts for the GRPO-RoC tests, built the way the rollout loop records them: the model's
 * turns, the statuses and texts of its tool calls, and the response text as a ChatML tokenizer
 * decodes it (what the released rStar2-Agent code reads).
 */
import type { Status } from '@sandfleet/protocol'
import { answerTagsBalanced, countAnswers, type RocRollout } from '@sandfleet/trainer'

const END = '<|im_end|>'

/**
 * The decoded response of `turns` (model texts) with one tool call between each two, `outputs[k]`
 * its printed text: each result in a `<tool_response>` user turn, the last turn ended by EOS.
 * The first assistant turn opens in the prompt, so it has no `<|im_start|>assistant` here.
 */
export function decodedChatml(turns: readonly string[], outputs: readonly string[]): string {
  if (turns.length !== outputs.length + 1) throw new Error('one tool output between each two turns')
  return (
    turns
      .map((t, k) =>
        k === 0
          ? t
          : `${END}\n<|im_start|>user\n<tool_response>\n${outputs[k - 1]}\n</tool_response>${END}\n<|im_start|>assistant\n${t}`
      )
      .join('') + END
  )
}

/** A rollout of `turns` whose tool calls (one between each two turns) ended as `calls` ([status, what it printed]). */
export function chatmlRollout(
  reward: number,
  turns: readonly string[],
  calls: ReadonlyArray<[Status | 'parse_error', string]> = []
): RocRollout {
  return {
    reward,
    toolStatuses: calls.map(([s]) => s),
    answers: countAnswers(turns),
    turns: turns.length,
    unbalancedAnswerTags: !answerTagsBalanced(turns),
    responseText: decodedChatml(
      turns,
      calls.map(([, out]) => out)
    )
  }
}

/** A turn that calls the tool. */
export const CALL = 'Let me compute.<tool_call>{"name": "python", "arguments": {"code": "print(6*7)"}}</tool_call>'
