import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { npzBytes, tensorBatch, writeTensors, type TensorRecord } from '@sandfleet/trainer'

const reader = new URL('../../python/sandfleet_tensors.py', import.meta.url).pathname
const dump = (path: string): Record<string, unknown> =>
  JSON.parse(execFileSync('python3', [reader, path, '--dump'], { encoding: 'utf8' })) as Record<string, unknown>

// two kept rollouts of different lengths (the second with a masked tool span), one not kept
const records: TensorRecord[] = [
  {
    group: 0,
    sample: 0,
    prompt_ids: [11, 12, 13],
    response_ids: [21, 22],
    loss_mask: [1, 1],
    rollout_logprobs: [-0.5, -0.25],
    reward: 1,
    advantage: 0.75
  },
  {
    group: 0,
    sample: 3,
    prompt_ids: [14],
    response_ids: [31, 32, 33, 34],
    loss_mask: [1, 0, 0, 1],
    rollout_logprobs: [-1, 0, 0, -2],
    reward: 0,
    advantage: -0.75
  },
  {
    group: 1,
    sample: 0,
    prompt_ids: [9],
    response_ids: [9],
    loss_mask: [1],
    rollout_logprobs: [-1],
    reward: 0,
    advantage: null
  }
]

test("kept rollouts become verl's padded tensors in an .npz that numpy reads (python3 and the reader)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-tensors-'))
  try {
    const path = join(dir, 'batch.npz')
    assert.equal(await writeTensors(path, records, { padTokenId: 7 }), 2)
    const got = dump(path)
    assert.deepEqual(
      got.prompts,
      [
        [11, 12, 13],
        [7, 7, 14]
      ],
      'prompts left-padded'
    )
    assert.deepEqual(
      got.responses,
      [
        [21, 22, 7, 7],
        [31, 32, 33, 34]
      ],
      'responses right-padded'
    )
    assert.deepEqual(got.input_ids, [
      [11, 12, 13, 21, 22, 7, 7],
      [7, 7, 14, 31, 32, 33, 34]
    ])
    assert.deepEqual(got.attention_mask, [
      [1, 1, 1, 1, 1, 0, 0],
      [0, 0, 1, 1, 1, 1, 1]
    ])
    assert.deepEqual(got.position_ids, [
      [0, 1, 2, 3, 4, 0, 0],
      [0, 0, 0, 1, 2, 3, 4]
    ])
    assert.deepEqual(
      got.response_mask,
      [
        [1, 1, 0, 0],
        [1, 0, 0, 1]
      ],
      'tool tokens and padding masked out'
    )
    assert.deepEqual(got.rollout_log_probs, [
      [-0.5, -0.25, 0, 0],
      [-1, 0, 0, -2]
    ])
    assert.deepEqual(got.advantages, [
      [0.75, 0.75, 0, 0],
      [-0.75, 0, 0, -0.75]
    ])
    assert.deepEqual(got.token_level_scores, [
      [0, 1, 0, 0],
      [0, 0, 0, 0]
    ])
    assert.deepEqual(
      [got.scores, got.uid, got.sample],
      [
        [1, 0],
        [0, 0],
        [0, 3]
      ]
    )
    assert.match(
      execFileSync('python3', [reader, path], { encoding: 'utf8' }),
      /^2 rollouts, prompts padded to 3, responses to 4; 4 policy tokens; mean score 0\.500/
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the reader refuses a batch whose masks or shapes disagree, naming the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-tensors-'))
  try {
    const batch = tensorBatch(records)
    batch.response_mask.data[2] = 1 // row 0 has 2 response tokens: position 2 is padding
    writeFileSync(join(dir, 'bad.npz'), npzBytes(batch))
    const bad = spawnSync('python3', [reader, join(dir, 'bad.npz')], { encoding: 'utf8' })
    assert.notEqual(bad.status, 0)
    assert.match(bad.stderr, /response_mask is 1 on padding/)
    const { uid: _uid, ...rest } = tensorBatch(records)
    writeFileSync(join(dir, 'missing.npz'), npzBytes(rest))
    assert.match(spawnSync('python3', [reader, join(dir, 'missing.npz')], { encoding: 'utf8' }).stderr, /missing uid/)
    const empty = join(dir, 'empty.npz')
    writeFileSync(empty, npzBytes(tensorBatch([])))
    assert.match(execFileSync('python3', [reader, empty], { encoding: 'utf8' }), /^0 rollouts/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
