/**
 * GRPO-RoC (Resample-on-Correct), rStar2-Agent report §2.2.3: from an oversampled group of 2G
 * rollouts keep G. Two selections:
 * - `sample` (the report): negatives drawn uniformly, positives without replacement with
 *   probability inversely proportional to p_total = p_err + p_format (ours, {@link formatPenalty});
 *   a group of `keep` or fewer is kept whole.
 * - `deterministic` (the released code, microsoft/rStar `rstar2_agent/`, after its removal of the
 *   negatives' sort): positives by lowest p_total first (ties in batch order), negatives the
 *   first in batch order, quotas by {@link releasedRocQuota}, p_format by
 *   {@link releasedFormatPenalty} on the response text; a group smaller than `keep` is dropped.
 * Both keep a few negatives and positives when the group has them (2 each by default, the
 * released code's guards), so a group with one wrong rollout of 32 still has a learning signal;
 * both count p_err by the chosen {@link ErrorCountRule}.
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import {
  errorPenalty,
  formatPenalty,
  releasedFormatPenalty,
  responseTextOf,
  type ErrorCountRule,
  type RocRollout
} from './roc-penalties.ts'
import { seededRandom } from './seeded-random.ts'

/** Options of {@link grpoRoc}. */
export interface RocOptions {
  /** Rollouts to keep (G). */
  keep: number
  /** Uniform draws in [0, 1) (default `seededRandom(0)`: never an unseeded draw). */
  random?: () => number
  /** Weight is 1 / max(p_total, floor) (default 0.01), so a zero penalty is not an infinite weight. */
  floor?: number
  /** `sample` (default, the report) or `deterministic` (the released code's selection; no draw). */
  mode?: RocMode
  /** How p_err counts a tool error: `status` (default, ours) or `substring` (the released code's). */
  errorCount?: ErrorCountRule
  /** Negatives kept at least, when the group has them (default 2, the released code's `min_zero_reward_trace_num`). */
  minNegatives?: number
  /** Positives kept at least, when the group has them (default 2, `min_non_zero_reward_trace_num`). */
  minPositives?: number
}

/** How RoC picks: `sample` draws (the report), `deterministic` is the released code's selection. */
export type RocMode = 'sample' | 'deterministic'

/** The RoC modes, for flag validation. */
export const ROC_MODES: readonly RocMode[] = Object.freeze(['sample', 'deterministic'])

function drawWeighted(items: number[], weights: number[], n: number, random: () => number): number[] {
  const pool = items.slice()
  const w = weights.slice()
  const out: number[] = []
  while (out.length < n && pool.length > 0) {
    const total = w.reduce((a, b) => a + b, 0)
    let x = random() * total
    let k = 0
    while (k < pool.length - 1 && x >= w[k]) {
      x -= w[k]
      k++
    }
    out.push(pool[k])
    pool.splice(k, 1)
    w.splice(k, 1)
  }
  return out
}

/**
 * The `sample` mode's quota: positives their share, round(#pos · keep / N) (half up), negatives
 * the rest, then at least `minNegatives` negatives and `minPositives` positives when the group
 * has them. When the two guards ask for more than `keep`, negatives get ⌊keep / 2⌋ of it and
 * positives the rest.
 */
export function rocQuota(
  positives: number,
  negatives: number,
  keep: number,
  minNegatives = 2,
  minPositives = 2
): { positives: number; negatives: number } {
  if (minNegatives + minPositives > keep) {
    minNegatives = Math.min(minNegatives, Math.floor(keep / 2))
    minPositives = Math.min(minPositives, keep - minNegatives)
  }
  let nPos = Math.round((positives * keep) / (positives + negatives))
  let nNeg = keep - nPos
  if (nNeg < Math.min(minNegatives, negatives)) {
    nNeg = Math.min(minNegatives, negatives)
    nPos = keep - nNeg
  }
  if (nPos < Math.min(minPositives, positives)) {
    nPos = Math.min(minPositives, positives)
    nNeg = keep - nPos
  }
  nPos = Math.min(nPos, positives)
  return { positives: nPos, negatives: Math.min(keep - nPos, negatives) }
}

/** `x` rounded to the nearest integer, halves to the even one (Python's `round`). */
export function roundHalfEven(x: number): number {
  const below = Math.floor(x)
  const fraction = x - below
  if (fraction < 0.5) return below
  if (fraction > 0.5) return below + 1
  return below % 2 === 0 ? below : below + 1
}

/**
 * The released code's quota for a group of more than `keep` (which needs `minNegatives` +
 * `minPositives` ≤ `keep`): each side its own share, rounded half to even; then, when the
 * negatives' share is at most their guard (min(`minNegatives`, #neg)), negatives get the guard
 * and positives the rest; then the same for positives. Where the released code stops on its
 * assertion (an odd `keep` with both shares exactly half-way rounds both the same way, so they
 * sum to `keep` ± 1), the positives' share stands and negatives get the rest.
 */
export function releasedRocQuota(
  positives: number,
  negatives: number,
  keep: number,
  minNegatives = 2,
  minPositives = 2
): { positives: number; negatives: number } {
  const total = positives + negatives
  let nPos = roundHalfEven((positives * keep) / total)
  const negativeGuard = Math.min(minNegatives, negatives)
  if (roundHalfEven((negatives * keep) / total) <= negativeGuard) nPos = keep - negativeGuard
  const positiveGuard = Math.min(minPositives, positives)
  if (nPos <= positiveGuard) nPos = positiveGuard
  return { positives: nPos, negatives: keep - nPos }
}

/**
 * Throws when `options` cannot run: `deterministic` needs `minNegatives` + `minPositives` ≤ `keep`, as the released
 * code asserts.
 */
export function checkRocOptions(options: RocOptions): void {
  const guards = (options.minNegatives ?? 2) + (options.minPositives ?? 2)
  if (options.mode === 'deterministic' && guards > options.keep) {
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `deterministic RoC keeps at least ${guards} (minNegatives + minPositives), more than keep ${options.keep}`,
      400
    )
  }
}

/** Returns the indices kept (sorted), by the selection of `options.mode`. */
export function grpoRoc(group: readonly RocRollout[], options: RocOptions): number[] {
  checkRocOptions(options)
  const { keep } = options
  const errorCount = options.errorCount ?? 'status'
  const minNegatives = options.minNegatives ?? 2
  const minPositives = options.minPositives ?? 2
  const all = group.map((_, i) => i)
  const pos = all.filter((i) => group[i].reward > 0)
  const neg = all.filter((i) => group[i].reward <= 0)
  if (options.mode === 'deterministic') {
    if (group.length < keep) return []
    if (group.length === keep) return all
    const penalty = group.map(
      (r) => errorPenalty(r, errorCount) + releasedFormatPenalty(responseTextOf(r, "deterministic RoC's p_format"))
    )
    const quota = releasedRocQuota(pos.length, neg.length, keep, minNegatives, minPositives)
    const lowest = pos.slice().sort((a, b) => penalty[a] - penalty[b]) // a stable sort: ties stay in batch order
    return [...lowest.slice(0, quota.positives), ...neg.slice(0, quota.negatives)].sort((a, b) => a - b)
  }
  if (group.length <= keep) return all
  const random = options.random ?? seededRandom(0)
  const floor = options.floor ?? 0.01
  const quota = rocQuota(pos.length, neg.length, keep, minNegatives, minPositives)
  const keptPos = drawWeighted(
    pos,
    pos.map((i) => 1 / Math.max(errorPenalty(group[i], errorCount) + formatPenalty(group[i]), floor)),
    quota.positives,
    random
  )
  const keptNeg = drawWeighted(
    neg,
    neg.map(() => 1),
    quota.negatives,
    random
  )
  return [...keptPos, ...keptNeg].sort((a, b) => a - b)
}
