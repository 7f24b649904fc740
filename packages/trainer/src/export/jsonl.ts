/**
 * Trajectories as JSONL for Python trainers (verl, OpenRLHF, TRL readers): one object per line
 * with snake_case fields — token ids, loss mask, rollout logprobs, reward, advantage, turns and
 * tool statistics.
 */
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import { isRetriable, isToolError } from '@sandfleet/protocol'
import type { Trajectory } from '../rollout/trajectory.ts'

/** One JSONL line. */
export interface TrajectoryRecord {
  /** `<prompt index>-<sample index>`. */
  id: string
  /** Index of the dataset item (the GRPO group). */
  group: number
  /** Index of the rollout within its group. */
  sample: number
  prompt_ids: number[]
  response_ids: number[]
  /** 1 for policy tokens, 0 for tool output; one per response token. */
  loss_mask: number[]
  /** Sampled tokens' logprobs under the rollout policy (0 where the mask is 0). */
  rollout_logprobs: number[]
  reward: number
  /** Group-relative advantage, or null when not computed (a rollout that was not kept). */
  advantage: number | null
  /** Kept by GRPO-RoC. */
  kept: boolean
  answer: string | null
  reference: string | null
  stop_reason: Trajectory['stopReason']
  num_turns: number
  prompt_length: number
  response_length: number
  /** Tool calls, and their outcomes by status (`parse_error` for calls that did not parse). */
  tool_calls: number
  tool_statuses: Record<string, number>
  /** Calls whose status is the code's error (or a parse error) over calls the fleet answered itself. */
  tool_error_ratio: number | null
  response_text: string
}

/** Fields of a record that are not in the trajectory. */
export interface RecordExtras {
  group: number
  sample: number
  reward: number
  advantage?: number | null
  kept?: boolean
  answer?: string | null
  reference?: string | null
}

/** Counts of tool-call statuses, and the error ratio with fleet faults left out. */
export function toolStatistics(t: Trajectory): {
  statuses: Record<string, number>
  errorRatio: number | null
  errors: number
  counted: number
} {
  const statuses: Record<string, number> = {}
  let errors = 0
  let counted = 0
  for (const c of t.toolCalls) {
    statuses[c.status] = (statuses[c.status] ?? 0) + 1
    if (c.status !== 'parse_error' && isRetriable(c.status)) continue
    counted++
    if (c.status === 'parse_error' || isToolError(c.status)) errors++
  }
  return { statuses, errorRatio: counted === 0 ? null : errors / counted, errors, counted }
}

/** The JSONL record of a trajectory. */
export function trajectoryRecord(t: Trajectory, extras: RecordExtras): TrajectoryRecord {
  const tools = toolStatistics(t)
  return {
    id: `${extras.group}-${extras.sample}`,
    group: extras.group,
    sample: extras.sample,
    prompt_ids: t.promptIds,
    response_ids: t.responseIds,
    loss_mask: t.lossMask,
    rollout_logprobs: t.logprobs,
    reward: extras.reward,
    advantage: extras.advantage ?? null,
    kept: extras.kept ?? true,
    answer: extras.answer ?? null,
    reference: extras.reference ?? null,
    stop_reason: t.stopReason,
    num_turns: t.turns.length,
    prompt_length: t.promptIds.length,
    response_length: t.responseIds.length,
    tool_calls: t.toolCalls.length,
    tool_statuses: tools.statuses,
    tool_error_ratio: tools.errorRatio,
    response_text: t.responseText
  }
}

/** A JSONL file written one record at a time (back-pressure respected). */
export class JsonlWriter {
  private readonly stream: ReturnType<typeof createWriteStream>
  /** Lines written. */
  lines = 0

  /** Opens (truncates) `path`. */
  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { encoding: 'utf8' })
  }

  /** Appends one record as a line. */
  async write(record: unknown): Promise<void> {
    this.lines++
    if (!this.stream.write(JSON.stringify(record) + '\n')) await once(this.stream, 'drain')
  }

  /** Flushes and closes the file. */
  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) =>
      this.stream.end((err?: Error | null) => {
        if (err) reject(err)
        else resolve()
      })
    )
  }
}
