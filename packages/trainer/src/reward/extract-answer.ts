/**
 * Finding the final answer in a response: the last `\boxed{…}` (or `\fbox{…}`), brace-matched,
 * inside the last `<answer>…</answer>` block when there is one.
 */

/** The content of the braces opening at `text[open]` (`{`), or undefined when they never close. */
function braced(text: string, open: number): string | undefined {
  let depth = 0
  for (let i = open; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') {
      i++
      continue
    } // \{ and \} do not count
    if (c === '{') depth++
    else if (c === '}' && --depth === 0) return text.slice(open + 1, i)
  }
  return undefined
}

/** The contents of every closed `\boxed{…}` / `\fbox{…}` (also `\boxed 5`), in order. */
export function allBoxed(text: string): string[] {
  const re = /\\(?:boxed|fbox)\s*(\{|\s+[^\s$]+)/g
  const found: string[] = []
  for (const m of text.matchAll(re)) {
    if (m[1] === '{') {
      const inner = braced(text, (m.index as number) + m[0].length - 1)
      if (inner !== undefined) found.push(inner)
    } else found.push(m[1].trim())
  }
  return found
}

/** The content of the last closed `\boxed{…}` / `\fbox{…}` (also `\boxed 5`), or undefined. */
export function lastBoxed(text: string): string | undefined {
  return allBoxed(text).at(-1)
}

/** The content of the last closed `<answer>…</answer>` block, or undefined. */
export function lastAnswerBlock(text: string): string | undefined {
  const blocks = [...text.matchAll(/<answer>([\s\S]*?)<\/answer>/g)]
  return blocks.at(-1)?.[1]
}

/**
 * The final answer of a response: the last `\boxed{}` inside the last `<answer>` block, the
 * block's own text when it has no box, or the last `\boxed{}` anywhere when there is no block.
 */
export function extractAnswer(text: string): string | undefined {
  const block = lastAnswerBlock(text)
  if (block !== undefined) {
    const boxed = lastBoxed(block)
    if (boxed !== undefined) return boxed
    return block.trim().length > 0 ? block.trim() : undefined
  }
  return lastBoxed(text)
}

/**
 * The boxes the final answer is read from: those of the last `<answer>` block when there is one, else those of the
 * whole text.
 */
export function finalBoxes(text: string): string[] {
  const block = lastAnswerBlock(text)
  return allBoxed(block ?? text)
}
