/**
 * A scripted "model" for the scripted engine (`sandfleet rollout --engine scripted`): it solves the arithmetic in a
 * problem with the tool, as a tool-using model does, so that a rollout runs end to end on a laptop, through a real
 * fleet, with no GPU. It reads the problem (the first user turn), writes a tool call in the format the request asks
 * for (its stop strings say which; the tool is the first one the prompt offers), reads the tool's output and answers
 * `<answer>\boxed{…}</answer>`. Its sampling seed makes a group differ, as sampling would: seed ≡ 1 (mod 5) first
 * writes code that fails and then fixes it (a tool error), seed ≡ 0 (mod 4) answers one off (a wrong answer). A
 * problem with no arithmetic it can read is answered `\boxed{?}`.
 *
 * @example
 * ```ts
 * const engine = await startScriptedEngine(arithmeticModel)   // engine.url speaks /v1/completions, /tokenize, …
 * ```
 */
import type { Script, ScriptContext } from './scripted-engine.ts'

/** The arithmetic of `problem` as a Python expression: `N squared`, `N cubed`, or its longest operator expression. */
export function arithmeticOf(problem: string): string | undefined {
  const power = /(-?\d+(?:\.\d+)?)\s+(squared|cubed)/i.exec(problem)
  if (power !== null) return `${power[1]} ** ${power[2].toLowerCase() === 'squared' ? 2 : 3}`
  const candidates = (problem.match(/[\d\s.+\-*/^×÷()%]+/g) ?? [])
    .map((c) => c.trim().replace(/[.\s]+$/, ''))
    .filter((c) => /\d\s*(\*\*|[-+*/^×÷%])\s*[\d(]/.test(c))
  const longest = candidates.sort((a, b) => b.length - a.length)[0]
  return longest?.replaceAll('^', '**').replaceAll('×', '*').replaceAll('÷', '/')
}

/**
 * The first user turn of a ChatML prompt (the problem, in its template) and what follows it (the episode's turns), else
 * the whole prompt as both.
 */
function split(prompt: string): { problem: string; episode: string } {
  const first = /<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>/.exec(prompt)
  if (first === null) return { problem: prompt, episode: prompt }
  return { problem: first[1], episode: prompt.slice(first.index + first[0].length) }
}

/** The tool-call format the request's stop strings ask for: hermes `</tool_call>`, markdown, `<code>`. */
function formatOf(body: ScriptContext['body']): 'hermes' | 'markdown' | 'code' {
  const stop = Array.isArray(body.stop) ? (body.stop as unknown[]).map(String) : []
  if (stop.includes('```output')) return 'markdown'
  if (stop.includes('</code>')) return 'code'
  return 'hermes'
}

/** A tool call of `code` in `format`, to the first tool the prompt offers (`python` when it offers none). */
function toolCall(format: ReturnType<typeof formatOf>, prompt: string, code: string): string {
  if (format === 'markdown') return `\`\`\`python\n${code}\n\`\`\`\n\`\`\`output`
  if (format === 'code') return `<code>\n${code}\n</code>`
  const name = /"name":\s*"([^"]+)"/.exec(prompt)?.[1] ?? 'python'
  return `<tool_call>\n${JSON.stringify({ name, arguments: { code, input: '' } })}\n</tool_call>`
}

/** What the episode's last tool call printed: after its closing marker, an error or a number. */
function lastResult(episode: string): { error: boolean; value: string | undefined } | undefined {
  const at = Math.max(
    episode.lastIndexOf('</tool_call>'),
    episode.lastIndexOf('```output'),
    episode.lastIndexOf('</code>')
  )
  if (at < 0) return undefined
  const tail = episode.slice(at).replace(/<\|[a-z_]+\|>/g, '')
  return { error: /Traceback|Error/.test(tail), value: /-?\d+(?:\.\d+)?/.exec(tail)?.[0] }
}

/** The scripted model; see the module comment. */
export const arithmeticModel: Script = (ctx) => {
  const seed = Number(ctx.body.seed ?? 0)
  // A preset that asks for <reason> tags (rstar2) and opens the first turn with one.
  const opened = ctx.prompt.trimEnd().endsWith('<reason>')
  const tags = opened || ctx.prompt.includes('<reason>')
  const think = (text: string): string =>
    opened ? ` ${text}</reason>\n` : tags ? `<reason>${text}</reason>\n` : `${text}\n`
  const answer = (value: string): string => `${think(`The answer is ${value}.`)}<answer>\\boxed{${value}}</answer>`
  const { problem, episode } = split(ctx.prompt)
  const expression = arithmeticOf(problem)
  if (expression === undefined) return answer('?')
  const format = formatOf(ctx.body)
  const result = lastResult(episode)
  const calls = episode.split(/<\/tool_call>|```output|<\/code>/).length - 1
  if (result === undefined) {
    const code = seed % 5 === 1 ? `print(${expression} +)` : `print(${expression})`
    return think(`I compute ${expression} with the tool.`) + toolCall(format, ctx.prompt, code)
  }
  if ((result.error || result.value === undefined) && calls < 3)
    return think('The code failed; I fix it.') + toolCall(format, ctx.prompt, `print(${expression})`)
  if (result.value === undefined) return answer('?')
  const value = seed % 4 === 0 ? String(Number(result.value) + 1) : result.value
  return answer(value)
}
