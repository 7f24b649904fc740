/**
 * The tensors a verl or OpenRLHF trainer takes, from the kept rollouts, padded into one batch and
 * written as one `.npz` (`numpy.load` reads it; `python/sandfleet_tensors.py` checks it). Names
 * follow verl's batch keys. B rollouts, P the longest prompt, R the longest response:
 *
 * | key | shape | dtype | |
 * |---|---|---|---|
 * | `prompts` | B×P | int32 | prompt ids, left-padded with the pad id |
 * | `responses` | B×R | int32 | response ids (model and tool tokens), right-padded |
 * | `input_ids` | B×(P+R) | int32 | `prompts` then `responses` |
 * | `attention_mask` | B×(P+R) | int8 | 1 on real tokens, 0 on padding |
 * | `position_ids` | B×(P+R) | int32 | running count of real tokens − 1, 0 on left padding |
 * | `response_mask` | B×R | int8 | the loss mask: 1 on policy tokens, 0 on tool output and padding |
 * | `rollout_log_probs` | B×R | float32 | the rollout policy's logprobs, 0 where the mask is 0 |
 * | `advantages` | B×R | float32 | the rollout's advantage on every masked-in token |
 * | `token_level_scores` | B×R | float32 | the reward on the last response token, 0 elsewhere |
 * | `scores` | B | float32 | the reward |
 * | `uid` | B | int32 | the group (dataset item) |
 * | `sample` | B | int32 | the rollout's index in its group |
 *
 * OpenRLHF calls `input_ids` `sequences` and `response_mask` `action_mask`.
 */
import { writeFile } from 'node:fs/promises'
import type { TrajectoryRecord } from './jsonl.ts'
import { npzBytes, type NpyArray } from './npz.ts'

/** What a tensor batch needs of a record (a {@link TrajectoryRecord} fits). */
export type TensorRecord = Pick<
  TrajectoryRecord,
  'group' | 'sample' | 'prompt_ids' | 'response_ids' | 'loss_mask' | 'rollout_logprobs' | 'reward' | 'advantage'
>

/** The keys of a tensor batch, in the order they are written. */
export const TENSOR_KEYS = Object.freeze([
  'prompts',
  'responses',
  'input_ids',
  'attention_mask',
  'position_ids',
  'response_mask',
  'rollout_log_probs',
  'advantages',
  'token_level_scores',
  'scores',
  'uid',
  'sample'
] as const)

/**
 * The padded batch of `records` (those with an advantage: the kept ones); `padTokenId` fills the padding (default 0).
 */
export function tensorBatch(
  records: readonly TensorRecord[],
  options: { padTokenId?: number } = {}
): Record<(typeof TENSOR_KEYS)[number], NpyArray> {
  const rows = records.filter((r) => r.advantage !== null)
  const pad = options.padTokenId ?? 0
  const B = rows.length
  const P = rows.reduce((m, r) => Math.max(m, r.prompt_ids.length), 0)
  const R = rows.reduce((m, r) => Math.max(m, r.response_ids.length), 0)
  const prompts = new Int32Array(B * P).fill(pad)
  const responses = new Int32Array(B * R).fill(pad)
  const inputIds = new Int32Array(B * (P + R)).fill(pad)
  const attention = new Int8Array(B * (P + R))
  const positions = new Int32Array(B * (P + R))
  const mask = new Int8Array(B * R)
  const logprobs = new Float32Array(B * R)
  const advantages = new Float32Array(B * R)
  const tokenScores = new Float32Array(B * R)
  rows.forEach((r, b) => {
    const left = P - r.prompt_ids.length
    prompts.set(r.prompt_ids, b * P + left)
    responses.set(r.response_ids, b * R)
    inputIds.set(r.prompt_ids, b * (P + R) + left)
    inputIds.set(r.response_ids, b * (P + R) + P)
    const real = r.prompt_ids.length + r.response_ids.length
    for (let k = 0; k < real; k++) {
      const at = b * (P + R) + (k < r.prompt_ids.length ? left + k : P + k - r.prompt_ids.length)
      attention[at] = 1
      positions[at] = k
    }
    r.response_ids.forEach((_, t) => {
      mask[b * R + t] = r.loss_mask[t]
      logprobs[b * R + t] = r.rollout_logprobs[t]
      advantages[b * R + t] = r.loss_mask[t] === 1 ? (r.advantage as number) : 0
    })
    if (r.response_ids.length > 0) tokenScores[b * R + r.response_ids.length - 1] = r.reward
  })
  return {
    prompts: { dtype: '<i4', shape: [B, P], data: prompts },
    responses: { dtype: '<i4', shape: [B, R], data: responses },
    input_ids: { dtype: '<i4', shape: [B, P + R], data: inputIds },
    attention_mask: { dtype: '|i1', shape: [B, P + R], data: attention },
    position_ids: { dtype: '<i4', shape: [B, P + R], data: positions },
    response_mask: { dtype: '|i1', shape: [B, R], data: mask },
    rollout_log_probs: { dtype: '<f4', shape: [B, R], data: logprobs },
    advantages: { dtype: '<f4', shape: [B, R], data: advantages },
    token_level_scores: { dtype: '<f4', shape: [B, R], data: tokenScores },
    scores: { dtype: '<f4', shape: [B], data: Float32Array.from(rows.map((r) => r.reward)) },
    uid: { dtype: '<i4', shape: [B], data: Int32Array.from(rows.map((r) => r.group)) },
    sample: { dtype: '<i4', shape: [B], data: Int32Array.from(rows.map((r) => r.sample)) }
  }
}

/** Writes the batch of `records` to `path` as an `.npz`; resolves with the number of rollouts written. */
export async function writeTensors(
  path: string,
  records: readonly TensorRecord[],
  options: { padTokenId?: number } = {}
): Promise<number> {
  const batch = tensorBatch(records, options)
  await writeFile(path, npzBytes(batch))
  return batch.uid.shape[0]
}
