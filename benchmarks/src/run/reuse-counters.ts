/**
 * The `reuse` isolation level's counters of a fleet, read from its /metrics: jobs that asked for the
 * level by the level they ran at (and why not reuse), and reuse processes retired by reason. A run
 * reads them before and after itself; what moved is its own.
 */

/**
 * The counters: `ran reuse`, `ran fork (static)`, … → jobs; `retired: reason` → processes. Empty when the fleet has no
 * /metrics.
 */
export async function reuseCounters(url: string): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  let text: string
  try {
    text = await (await fetch(`${url}/metrics`)).text()
  } catch {
    return out
  }
  for (const line of text.split('\n')) {
    const jobs = /^sandfleet_runner_reuse_jobs_total\{[^}]*level="(\w+)",refused="(\w*)"[^}]*\} (\S+)$/.exec(line)
    if (jobs !== null) out.set(`ran ${jobs[1]}${jobs[2] === '' ? '' : ` (${jobs[2]})`}`, Number(jobs[3]))
    const retired = /^sandfleet_runner_reuse_retirements_total\{[^}]*reason="(\w+)"[^}]*\} (\S+)$/.exec(line)
    if (retired !== null) out.set(`retired: ${retired[1]}`, Number(retired[2]))
  }
  return out
}

/** What moved between two reads, as one line (`ran reuse 9817, ran fork (static) 310, retired: import 12`); `none`. */
export function countersMoved(before: Map<string, number>, after: Map<string, number>): string {
  const moved = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, d]) => d > 0)
  return moved.length === 0 ? 'none' : moved.map(([k, d]) => `${k} ${d}`).join(', ')
}
