/**
 * {@link renderChatml}: chat messages as ChatML text (Qwen's turn markers), for engines whose
 * `/tokenize` takes text only. Tool schemas go into the system turn as JSON lines inside
 * `<tools></tools>`, with the `<tool_call>` format the model is to answer in (the layout of
 * Qwen's Hermes-style template; the wording is ours). A server that applies the model's own chat
 * template renders `tools` itself and needs none of this.
 */
import type { ChatMessage, ToolSchema } from './engine.ts'

/** The system-turn text that presents `tools` to the model. */
export function toolsBlock(tools: readonly ToolSchema[]): string {
  return (
    '# Tools\n\nThese functions are available, as JSON schemas:\n<tools>\n' +
    tools.map((t) => JSON.stringify(t)).join('\n') +
    '\n</tools>\n\nTo call one, write a JSON object with its name and arguments between tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  )
}

/** ChatML text of `messages`; with `tools`, the system turn (opened if absent) ends with {@link toolsBlock}. */
export function renderChatml(
  messages: readonly ChatMessage[],
  addGenerationPrompt: boolean,
  tools?: readonly ToolSchema[]
): string {
  let list = messages
  if (tools !== undefined && tools.length > 0) {
    const block = toolsBlock(tools)
    list =
      messages[0]?.role === 'system'
        ? [{ role: 'system', content: `${messages[0].content}\n\n${block}` }, ...messages.slice(1)]
        : [{ role: 'system', content: block }, ...messages]
  }
  return (
    list.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') +
    (addGenerationPrompt ? '<|im_start|>assistant\n' : '')
  )
}
