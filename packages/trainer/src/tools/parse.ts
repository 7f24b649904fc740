/**
 * Tool calls in the formats trainers use. A call that does not parse is returned as a
 * {@link ToolCallParseError} whose `reason` goes back to the model as a tool response
 * (rStar2-Agent does this), never thrown.
 */

/** Tool-call formats: Hermes JSON (`<tool_call>`), Markdown ```` ```python ```` fences, `<code>` tags. */
export type ToolCallFormat = 'hermes' | 'markdown' | 'code'

/** A parsed call: the code to run and its standard input. */
export interface ParsedToolCall {
  ok: true
  name: string
  code: string
  stdin: string
  raw: string
}
/** A call that did not parse, with the reason the model is told. */
export interface ToolCallParseError {
  ok: false
  reason: string
  raw: string
}
/** One tool call found in the model's text. */
export type ToolCall = ParsedToolCall | ToolCallParseError

/** Stop strings that end a generation right after a call, per format. */
export const TOOL_CALL_STOPS: Readonly<Record<ToolCallFormat, readonly string[]>> = Object.freeze({
  hermes: ['</tool_call>'],
  markdown: ['```output'],
  code: ['</code>']
})

/**
 * The stop strings of a turn that may make `maxParallelCalls` calls: with one, the turn stops
 * right after the call; with more, the closing tag of the first call must not end the turn, so
 * `hermes` and `code` turns end at EOS (as verl generates them). Markdown's ```` ```output ```` fence
 * asks for every block before it, so it stays.
 */
export function toolCallStops(format: ToolCallFormat, maxParallelCalls: number): readonly string[] {
  return maxParallelCalls > 1 && format !== 'markdown' ? [] : TOOL_CALL_STOPS[format]
}

/** Tool names a call may use when the caller names none: `python` and rStar2-Agent's `python_code_with_standard_io`. */
export const DEFAULT_TOOL_NAMES: readonly string[] = Object.freeze(['python', 'python_code_with_standard_io'])

function parseHermes(body: string, raw: string): ToolCall {
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch (err) {
    return { ok: false, raw, reason: `the tool call is not valid JSON: ${(err as Error).message}` }
  }
  if (typeof value !== 'object' || value === null)
    return { ok: false, raw, reason: 'the tool call must be a JSON object with "name" and "arguments"' }
  const v = value as { name?: unknown; arguments?: unknown }
  let args = v.arguments
  if (typeof args === 'string') {
    try {
      args = JSON.parse(args)
    } catch {
      return { ok: false, raw, reason: '"arguments" is a string that is not valid JSON' }
    }
  }
  if (typeof v.name !== 'string') return { ok: false, raw, reason: 'the tool call has no "name" string' }
  if (typeof args !== 'object' || args === null)
    return { ok: false, raw, reason: 'the tool call has no "arguments" object' }
  const a = args as { code?: unknown; input?: unknown }
  if (typeof a.code !== 'string' || a.code.trim() === '')
    return { ok: false, raw, reason: '"arguments.code" must be a non-empty string' }
  if (a.input !== undefined && typeof a.input !== 'string')
    return { ok: false, raw, reason: '"arguments.input" must be a string' }
  return { ok: true, name: v.name, code: a.code, stdin: a.input ?? '', raw }
}

/** Finds every tool call in `text` (one assistant turn), in order. */
export function parseToolCalls(text: string, format: ToolCallFormat): ToolCall[] {
  const calls: ToolCall[] = []
  if (format === 'hermes') {
    const re = /<tool_call>([\s\S]*?)(<\/tool_call>|$)/g
    for (const m of text.matchAll(re)) {
      if (m[2] === '') calls.push({ ok: false, raw: m[0], reason: 'the tool call is not closed with </tool_call>' })
      else calls.push(parseHermes(m[1].trim(), m[0]))
    }
  } else if (format === 'markdown') {
    const re = /```python[^\n]*\n([\s\S]*?)(```|$)/g
    for (const m of text.matchAll(re)) {
      if (m[2] === '') calls.push({ ok: false, raw: m[0], reason: 'the ```python block is not closed with ```' })
      else if (m[1].trim() === '') calls.push({ ok: false, raw: m[0], reason: 'the ```python block is empty' })
      else calls.push({ ok: true, name: 'python', code: m[1], stdin: '', raw: m[0] })
    }
  } else {
    const re = /<code>([\s\S]*?)(<\/code>|$)/g
    for (const m of text.matchAll(re)) {
      const code = m[1].replace(/^\s*```(?:python)?\n?/, '').replace(/```\s*$/, '')
      if (m[2] === '') calls.push({ ok: false, raw: m[0], reason: 'the <code> block is not closed with </code>' })
      else if (code.trim() === '') calls.push({ ok: false, raw: m[0], reason: 'the <code> block is empty' })
      else calls.push({ ok: true, name: 'python', code, stdin: '', raw: m[0] })
    }
  }
  return calls
}
