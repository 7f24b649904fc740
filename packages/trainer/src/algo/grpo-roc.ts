/**
 * GRPO-RoC (Resample-on-Correct), rStar2-Agent report §2.2.3: from an oversampled group of 2G
 * rollouts keep G; negatives are sampled uniformly, positives without replacement with
 * probability inversely proportional to p_total = p_err + p_format.
 */
import { isRetriable, isToolError, type Status } from '@sandfleet/protocol'

/** What RoC needs of one rollout. */
export interface RocRollout {
  reward: number
  /** Statuses of its tool calls (`parse_error` for calls that did not parse). */
  toolStatuses: ReadonlyArray<Status | 'parse_error'>
  /** Closed `<answer>…</answer>` blocks in the response. */
  answers: number
  /** Assistant turns. */
  turns: number
}

/**
 * p_err: tool calls whose status is an error (the code's statuses other than ok, and parse
 * failures) over tool calls; fleet statuses are the fleet's fault and are left out of both
 * counts. 0.5 when there is no tool call.
 */
export function errorPenalty (r: RocRollout): number {
  const counted = r.toolStatuses.filter((s) => s === 'parse_error' || !isRetriable(s))
  if (counted.length === 0) return 0.5
  return counted.filter((s) => s === 'parse_error' || isToolError(s)).length / counted.length
}

/** p_format: 1 when the answer is missing, else min(1, (#answers − 1) / #turns). */
export function formatPenalty (r: RocRollout): number {
  if (r.answers === 0 || r.turns === 0) return 1
  return Math.min(1, (r.answers - 1) / r.turns)
}

/** Options of {@link grpoRoc}. */
export interface RocOptions {
  /** Rollouts to keep (G). */
  keep: number
  /** Uniform draws in [0, 1) (seed it for reproducibility; see {@link seededRandom}). */
  random?: () => number
  /** Weight is 1 / max(p_total, floor) (default 0.01), so a zero penalty is not an infinite weight. */
  floor?: number
  /** `sample` (default, the report) or `deterministic` (lowest penalties first). */
  mode?: 'sample' | 'deterministic'
}

/** Mulberry32: a small seedable generator of uniform draws in [0, 1). */
export function seededRandom (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function drawWeighted (items: number[], weights: number[], n: number, random: () => number): number[] {
  const pool = items.slice()
  const w = weights.slice()
  const out: number[] = []
  while (out.length < n && pool.length > 0) {
    const total = w.reduce((a, b) => a + b, 0)
    let x = random() * total
    let k = 0
    while (k < pool.length - 1 && x >= w[k]) { x -= w[k]; k++ }
    out.push(pool[k])
    pool.splice(k, 1)
    w.splice(k, 1)
  }
  return out
}

/**
 * Returns the indices kept (sorted). Positives (reward > 0) and negatives keep their share of
 * the group: round(#pos · keep / N) positives, the rest negatives (bounded by what exists).
 */
export function grpoRoc (group: readonly RocRollout[], options: RocOptions): number[] {
  const { keep } = options
  if (group.length <= keep) return group.map((_, i) => i)
  const random = options.random ?? Math.random
  const floor = options.floor ?? 0.01
  const pos = group.map((_, i) => i).filter((i) => group[i].reward > 0)
  const neg = group.map((_, i) => i).filter((i) => group[i].reward <= 0)
  let nPos = Math.min(pos.length, Math.round(pos.length * keep / group.length))
  const nNeg = Math.min(neg.length, keep - nPos)
  nPos = Math.min(pos.length, keep - nNeg)
  const penalty = (i: number): number => errorPenalty(group[i]) + formatPenalty(group[i])
  let keptPos: number[]
  if (options.mode === 'deterministic') keptPos = pos.slice().sort((a, b) => penalty(a) - penalty(b) || a - b).slice(0, nPos)
  else keptPos = drawWeighted(pos, pos.map((i) => 1 / Math.max(penalty(i), floor)), nPos, random)
  const keptNeg = drawWeighted(neg, neg.map(() => 1), nNeg, random)
  return [...keptPos, ...keptNeg].sort((a, b) => a - b)
}
