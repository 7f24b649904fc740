/**
 * The fleet's sandbox replacements by reason, read from its runners' /metrics
 * (`sandfleet_runner_sandbox_replacements_total{reason}`, summed over languages and backends). A
 * run reads them before and after itself; what moved is its own.
 */

/** Replacements by reason (`unswept` → 2); undefined when no URL answers /metrics with a runner's metrics. */
export async function replacementCounters(urls: readonly string[]): Promise<Map<string, number> | undefined> {
  let out: Map<string, number> | undefined
  for (const url of urls) {
    let text: string
    try {
      const res = await fetch(`${url}/metrics`)
      text = await res.text()
      if (!res.ok || !text.includes('sandfleet_runner_')) continue
    } catch {
      continue
    }
    out ??= new Map()
    for (const line of text.split('\n')) {
      const m = /^sandfleet_runner_sandbox_replacements_total\{[^}]*reason="(\w+)"[^}]*\} (\S+)$/.exec(line)
      if (m !== null) out.set(m[1], (out.get(m[1]) ?? 0) + Number(m[2]))
    }
  }
  return out
}

/** What moved between two reads, by reason (only reasons that moved). */
export function replacementsMoved(
  before: ReadonlyMap<string, number>,
  after: ReadonlyMap<string, number>
): Record<string, number> {
  const moved: Record<string, number> = {}
  for (const [reason, n] of after) {
    const d = n - (before.get(reason) ?? 0)
    if (d > 0) moved[reason] = d
  }
  return moved
}
