/** Tool results as the model reads them, in named styles, truncated by characters with a marker. */
import type { ExecResult } from '@sandfleet/protocol'

/**
 * `rstar2`: `<tool_response>` text; `verl`: the bare text (the chat template wraps it); `output-fence`: ```` ```output
 * ```` block.
 */
export type ResultStyle = 'rstar2' | 'verl' | 'output-fence'
/**
 * The side of a long text that is kept, as verl's `tool_response_truncate_side` names it: `left`
 * keeps the start, `right` keeps the end, `middle` keeps both ends and cuts the middle.
 */
export type TruncateSide = 'left' | 'middle' | 'right'

/** The truncation sides, for flag validation. */
export const TRUNCATE_SIDES: readonly TruncateSide[] = Object.freeze(['left', 'middle', 'right'])

/** Truncation options: at most `maxChars` characters of the text (verl's `max_tool_response_length`), `side` kept. */
export interface TruncateOptions {
  maxChars: number
  side: TruncateSide
  marker?: string
}

/** Cuts `text` to at most `maxChars` characters plus a marker naming how many were cut. */
export function truncate(
  text: string,
  { maxChars, side, marker = '...[{n} chars truncated]...' }: TruncateOptions
): string {
  if (text.length <= maxChars) return text
  const mark = marker.replace('{n}', String(text.length - maxChars))
  if (side === 'left') return text.slice(0, maxChars) + mark
  if (side === 'right') return mark + text.slice(text.length - maxChars)
  const head = Math.ceil(maxChars / 2)
  return text.slice(0, head) + mark + text.slice(text.length - (maxChars - head))
}

/** The text of one result: output, then why it did not end `ok` (status-driven, not text-driven). */
export function resultText(r: ExecResult): string {
  const out = [r.stdout, r.stderr].filter((s) => s.length > 0).join('\n')
  switch (r.status) {
    case 'ok':
      return out.length > 0 ? out : '(no output)'
    case 'error':
      return (
        [
          out,
          r.error?.traceback && !out.includes(r.error.traceback) ? r.error.traceback : '',
          r.error && !out.includes(r.error.message) ? `${r.error.type}: ${r.error.message}` : ''
        ]
          .filter(Boolean)
          .join('\n') || 'Error'
      )
    case 'timeout':
      return `${out}${out ? '\n' : ''}TimeoutError: the code ran past its time limit`
    case 'memory':
      return `${out}${out ? '\n' : ''}MemoryError: the code ran out of memory`
    case 'killed':
      return `${out}${out ? '\n' : ''}Killed: the code was killed`
    default:
      return `The tool is unavailable (${r.status}): ${r.error?.message ?? ''}`.trim()
  }
}

/** Formats a result (or a parse failure's reason) for the model in `style`. */
export function formatToolResult(
  input: ExecResult | { parseError: string },
  style: ResultStyle,
  trunc?: TruncateOptions
): string {
  let text = 'parseError' in input ? `Error: ${input.parseError}` : resultText(input)
  if (trunc) text = truncate(text, trunc)
  if (style === 'rstar2') return `<tool_response>\n${text}\n</tool_response>`
  if (style === 'output-fence') return `\n\`\`\`output\n${text}\n\`\`\`\n`
  return text
}
