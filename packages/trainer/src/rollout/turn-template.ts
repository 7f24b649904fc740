/**
 * How a formatted tool result enters the token stream between two model turns. The rollout loop
 * tokenizes the text a template returns and masks it (loss mask 0): the model did not write it.
 */

/** What a template knows about the model turn that just ended. */
export interface TurnEnd {
  /** The turn ended with the engine's EOS / end-of-turn token (not with a stop string). */
  endedWithEos: boolean
}

/** Builds the text placed after a model turn that called tools, before the next model turn. */
export type TurnTemplate = (toolText: string, end: TurnEnd) => string

/**
 * ChatML (Qwen, rStar2-Agent): close the assistant turn if the stop string left it open, put the
 * tool response in a user turn, open the next assistant turn.
 */
export const chatmlToolTurn: TurnTemplate = (toolText, end) =>
  `${end.endedWithEos ? '' : '<|im_end|>'}\n<|im_start|>user\n${toolText}<|im_end|>\n<|im_start|>assistant\n`

/** Inline: the tool result continues the same assistant text (Markdown ```` ```output ```` fences, `<code>` tags). */
export const inlineToolTurn: TurnTemplate = (toolText) => toolText

/** Named templates. */
export const TURN_TEMPLATES: Readonly<Record<'chatml' | 'inline', TurnTemplate>> = Object.freeze({
  chatml: chatmlToolTurn,
  inline: inlineToolTurn
})
