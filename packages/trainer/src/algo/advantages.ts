/** Group-relative advantages (GRPO, Dr.GRPO), the equal-reward group filter and DAPO's overlong penalty. */

/** GRPO: (r − mean) / (std + eps), std the population standard deviation of the group. Dr.GRPO: r − mean. */
export function groupAdvantages (rewards: readonly number[], method: 'grpo' | 'dr_grpo' = 'grpo', eps = 1e-6): number[] {
  if (rewards.length === 0) return []
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length
  if (method === 'dr_grpo') return rewards.map((r) => r - mean)
  const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length)
  return rewards.map((r) => (r - mean) / (std + eps))
}

/** True when every reward of the group is equal (no learning signal): DAPO drops such groups. */
export function hasEqualRewards (rewards: readonly number[]): boolean {
  return rewards.every((r) => r === rewards[0])
}

/**
 * DAPO's soft overlong punishment: 0 up to `maxLength − cacheLength` tokens, then falling
 * linearly to −1 at `maxLength`, −1 beyond.
 */
export function overlongPenalty (length: number, maxLength: number, cacheLength: number): number {
  const soft = maxLength - cacheLength
  if (length <= soft) return 0
  if (length <= maxLength) return (soft - length) / cacheLength
  return -1
}
