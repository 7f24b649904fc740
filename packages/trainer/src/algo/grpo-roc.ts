/**
 * GRPO-RoC (Resample-on-Correct), rStar2-Agent report §2.2.3: from an oversampled group of 2G
 * rollouts keep G; negatives are sampled uniformly, positives without replacement with
 * probability inversely proportional to p_total = p_err + p_format. As in the released code, a
 * few negatives and positives are guaranteed (2 each by default) so that a group with one wrong
 * rollout of 32 still has a learning signal; `deterministic` mode is the released code's
 * selection (lowest p_total first, for negatives too).
 */
import { isRetriable, isToolError, type Status } from '@sandfleet/protocol'
import { seededRandom } from './seeded-random.ts'

/** What RoC needs of one rollout. */
export interface RocRollout {
  reward: number
  /** Statuses of its tool calls (`parse_error` for calls that did not parse). */
  toolStatuses: ReadonlyArray<Status | 'parse_error'>
  /** Closed `<answer>…</answer>` blocks in the response. */
  answers: number
  /** Assistant turns. */
  turns: number
  /** `<answer>` and `</answer>` tags do not pair up (an answer left open): p_format is 1. */
  unbalancedAnswerTags?: boolean
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

/**
 * p_format: 1 when there is no closed `<answer>` block (a `\boxed{}` alone is no answer block) or
 * the tags do not pair up, else min(1, (#answers − 1) / #turns).
 */
export function formatPenalty (r: RocRollout): number {
  if (r.answers === 0 || r.turns === 0 || r.unbalancedAnswerTags === true) return 1
  return Math.min(1, (r.answers - 1) / r.turns)
}

/** Options of {@link grpoRoc}. */
export interface RocOptions {
  /** Rollouts to keep (G). */
  keep: number
  /** Uniform draws in [0, 1) (default `seededRandom(0)`: never an unseeded draw). */
  random?: () => number
  /** Weight is 1 / max(p_total, floor) (default 0.01), so a zero penalty is not an infinite weight. */
  floor?: number
  /** `sample` (default, the report) or `deterministic` (the released code: lowest p_total first, negatives too; no draw). */
  mode?: RocMode
  /** Negatives kept at least, when the group has them (default 2, the released code's `min_zero_reward_trace_num`). */
  minNegatives?: number
  /** Positives kept at least, when the group has them (default 2, `min_non_zero_reward_trace_num`). */
  minPositives?: number
}

/** How RoC picks: `sample` draws (the report), `deterministic` sorts by penalty (the released code). */
export type RocMode = 'sample' | 'deterministic'

/** The RoC modes, for flag validation. */
export const ROC_MODES: readonly RocMode[] = Object.freeze(['sample', 'deterministic'])

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
 * How many positives and negatives of a group to keep: each its share, round(#pos · keep / N), then
 * at least `minNegatives` negatives and `minPositives` positives when the group has them. When the
 * two guards ask for more than `keep`, negatives get ⌊keep / 2⌋ of it and positives the rest.
 */
export function rocQuota (positives: number, negatives: number, keep: number, minNegatives = 2, minPositives = 2): { positives: number, negatives: number } {
  if (minNegatives + minPositives > keep) {
    minNegatives = Math.min(minNegatives, Math.floor(keep / 2))
    minPositives = Math.min(minPositives, keep - minNegatives)
  }
  let nPos = Math.round(positives * keep / (positives + negatives))
  let nNeg = keep - nPos
  if (nNeg < Math.min(minNegatives, negatives)) { nNeg = Math.min(minNegatives, negatives); nPos = keep - nNeg }
  if (nPos < Math.min(minPositives, positives)) { nPos = Math.min(minPositives, positives); nNeg = keep - nPos }
  nPos = Math.min(nPos, positives)
  return { positives: nPos, negatives: Math.min(keep - nPos, negatives) }
}

/** Returns the indices kept (sorted); see {@link rocQuota} for the split. A group of `keep` or fewer is kept whole. */
export function grpoRoc (group: readonly RocRollout[], options: RocOptions): number[] {
  const { keep } = options
  if (group.length <= keep) return group.map((_, i) => i)
  const random = options.random ?? seededRandom(0)
  const floor = options.floor ?? 0.01
  const pos = group.map((_, i) => i).filter((i) => group[i].reward > 0)
  const neg = group.map((_, i) => i).filter((i) => group[i].reward <= 0)
  const quota = rocQuota(pos.length, neg.length, keep, options.minNegatives ?? 2, options.minPositives ?? 2)
  const penalty = (i: number): number => errorPenalty(group[i]) + formatPenalty(group[i])
  const lowest = (idx: number[], n: number): number[] => idx.slice().sort((a, b) => penalty(a) - penalty(b) || a - b).slice(0, n)
  if (options.mode === 'deterministic') return [...lowest(pos, quota.positives), ...lowest(neg, quota.negatives)].sort((a, b) => a - b)
  const keptPos = drawWeighted(pos, pos.map((i) => 1 / Math.max(penalty(i), floor)), quota.positives, random)
  const keptNeg = drawWeighted(neg, neg.map(() => 1), quota.negatives, random)
  return [...keptPos, ...keptNeg].sort((a, b) => a - b)
}
