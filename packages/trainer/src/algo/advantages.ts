/** Group-relative advantages (GRPO, Dr.GRPO), the equal-reward group filter and DAPO's overlong penalty. */

/** Standard deviation of a group's rewards: `population` (÷ n) or `unbiased` (÷ n − 1, as verl's `torch.std`). */
export type AdvantageStd = 'population' | 'unbiased'

/** The standard deviations {@link groupAdvantages} takes. */
export const ADVANTAGE_STDS: readonly AdvantageStd[] = Object.freeze(['population', 'unbiased'])

/** Advantage estimators: GRPO (normalised by the group's std) and Dr.GRPO (mean removed only). */
export type AdvantageMethod = 'grpo' | 'dr_grpo'

/** The estimators {@link groupAdvantages} takes. */
export const ADVANTAGE_METHODS: readonly AdvantageMethod[] = Object.freeze(['grpo', 'dr_grpo'])

/**
 * GRPO: (r − mean) / (std + eps); `std` is the population std (default) or verl's unbiased one,
 * and with `unbiased` a group of one gets mean 0 and std 1 as in verl's
 * `compute_grpo_outcome_advantage`. Dr.GRPO: r − mean.
 */
export function groupAdvantages(
  rewards: readonly number[],
  method: AdvantageMethod = 'grpo',
  options: { std?: AdvantageStd; eps?: number } = {}
): number[] {
  const n = rewards.length
  if (n === 0) return []
  const eps = options.eps ?? 1e-6
  const unbiased = options.std === 'unbiased'
  if (unbiased && n === 1 && method === 'grpo') return rewards.map((r) => r / (1 + eps))
  const mean = rewards.reduce((a, b) => a + b, 0) / n
  if (method === 'dr_grpo') return rewards.map((r) => r - mean)
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (unbiased ? n - 1 : n))
  return rewards.map((r) => (r - mean) / (std + eps))
}

/** True when every reward of the group is equal (no learning signal): DAPO drops such groups. */
export function hasEqualRewards(rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0])
}

/**
 * DAPO's soft overlong punishment: 0 up to `maxLength − cacheLength` tokens, then falling
 * linearly to −1 at `maxLength`, −1 beyond.
 */
export function overlongPenalty(length: number, maxLength: number, cacheLength: number): number {
  const soft = maxLength - cacheLength
  if (length <= soft) return 0
  if (length <= maxLength) return (soft - length) / cacheLength
  return -1
}
