/**
 * `<answer>` blocks in the model's turns, as GRPO-RoC's p_format counts them (rStar2-Agent): a
 * closed block is an answer; a `\boxed{}` outside any block is not.
 */

const ANSWER_BLOCK = /<answer>[\s\S]*?<\/answer>/g

/** Closed `<answer>…</answer>` blocks over all turns (0 when the model never writes the tag). */
export function countAnswers(turnTexts: readonly string[]): number {
  return turnTexts.reduce((n, t) => n + (t.match(ANSWER_BLOCK)?.length ?? 0), 0)
}

/** True when every `<answer>` and every `</answer>` belongs to a closed block (none left open or stray). */
export function answerTagsBalanced(turnTexts: readonly string[]): boolean {
  const text = turnTexts.join('')
  const closed = text.match(ANSWER_BLOCK)?.length ?? 0
  return text.split('<answer>').length - 1 === closed && text.split('</answer>').length - 1 === closed
}
