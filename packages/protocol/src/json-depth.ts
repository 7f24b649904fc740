/** How deep a parsed JSON value nests, checked without recursion (a hostile body may nest 100,000 deep). */

/**
 * True when `value` nests arrays or objects more than `limit` levels deep (`[]` and `{}` are one
 * level, `[[1]]` two). Stops at the first branch past the limit; visits each value at most once.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [v, depth] = top
    if (typeof v !== 'object' || v === null) continue
    if (depth > limit) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}
