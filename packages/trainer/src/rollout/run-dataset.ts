/**
 * {@link runDataset}: a dataset through engine and fleet, GRPO-style. Each item gets `n` rollouts
 * ({@link runEpisode}, `concurrency` at once over the whole dataset), a math reward (a code reward
 * for an item with tests: its program judged by the fleet), groups whose
 * rewards are all equal are rejected (optional), GRPO-RoC keeps `keep` of each group, and the kept
 * ones get group advantages; every record goes to `onRecord` as its group finishes, and a
 * {@link RolloutSummary} comes back. An episode whose tool call met a fleet fault (`overloaded`,
 * `queue_timeout`, `infra_error`) is re-run or dropped, never scored: the model did nothing wrong;
 * a program the fleet failed to judge is judged again, then dropped, the same way.
 */
import { Limiter } from '@sandfleet/client'
import { isRetriable } from '@sandfleet/protocol'
import {
  groupAdvantages,
  hasEqualRewards,
  overlongPenalty,
  type AdvantageMethod,
  type AdvantageStd
} from '../algo/advantages.ts'
import { checkRocOptions, grpoRoc, type RocMode, type RocOptions } from '../algo/grpo-roc.ts'
import type { ErrorCountRule } from '../algo/roc-penalties.ts'
import { seededRandom } from '../algo/seeded-random.ts'
import type { ChatMessage } from '../engine/engine.ts'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import { toolStatistics, trajectoryRecord, type TrajectoryRecord } from '../export/jsonl.ts'
import { codeReward, type CodeRewardOptions, type CodeTests, type Judge } from '../reward/code-reward.ts'
import { mathReward } from '../reward/math-reward.ts'
import { codeTestsOf } from './code-dataset.ts'
import { EpisodeSession, type SessionOpener } from './episode-session.ts'
import { runEpisode, type EpisodeOptions } from './run-episode.ts'
import { modelText, toRocRollout, type Trajectory } from './trajectory.ts'

/** One dataset item. */
export interface DatasetItem {
  messages: ChatMessage[]
  /** The reference answer, when the item has one. */
  reference: string | null
  /** A code problem's tests (its reward is the fleet's judge of the program), when the item has them. */
  tests?: CodeTests
}

/** A rollout's reward: `fleetFault` or `unscored` say it could not be scored (it is judged again, or left out). */
export interface RewardOutcome {
  reward: number
  answer: string | null
  /** The fleet failed to score it (a judge's fleet verdict): judge again, then leave the rollout out. */
  fleetFault?: boolean
  /** Why it cannot be scored (a dataset's tests the fleet refused): the rollout is left out. */
  unscored?: string
}

/**
 * Reads one JSONL line: `messages` (chat) or `prompt` / `question` / `problem` (text), and
 * `answer` / `reference` / `ground_truth` / `solution`, or a code problem's tests
 * (code-dataset.ts: APPS/TACO's `input_output`, LiveCodeBench's test cases, `tests`);
 * `systemPrompt` goes first when given, and each user turn is put into `userTemplate` (its
 * `{problem}` replaced by the turn's text) when given.
 */
export function parseDatasetLine(
  line: string,
  lineNo: number,
  systemPrompt?: string,
  userTemplate?: string
): DatasetItem {
  let v: Record<string, unknown>
  try {
    v = JSON.parse(line) as Record<string, unknown>
  } catch (err) {
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      `dataset line ${lineNo}: not JSON (${(err as Error).message})`,
      400
    )
  }
  let messages: ChatMessage[]
  if (Array.isArray(v.messages)) messages = v.messages as ChatMessage[]
  else {
    const text = [v.prompt, v.question, v.problem].find((x) => typeof x === 'string')
    if (typeof text !== 'string')
      throw new TrainerError(
        TRAINER_ERROR_CODES.BAD_INPUT,
        `dataset line ${lineNo}: needs "messages" or a "prompt", "question" or "problem" string`,
        400
      )
    messages = [{ role: 'user', content: text }]
  }
  if (userTemplate !== undefined)
    messages = messages.map((m) =>
      m.role === 'user' ? { role: 'user', content: userTemplate.split('{problem}').join(m.content) } : m
    )
  if (systemPrompt !== undefined && messages[0]?.role !== 'system')
    messages = [{ role: 'system', content: systemPrompt }, ...messages]
  const tests = codeTestsOf(v, lineNo)
  if (tests !== undefined) return { messages, reference: null, tests }
  const ref = [v.answer, v.reference, v.ground_truth, v.solution].find(
    (x) => typeof x === 'string' || typeof x === 'number'
  )
  return { messages, reference: ref === undefined ? null : String(ref) }
}

/** What happens to an episode whose tool call met a fleet fault: run it again, or leave it out. */
export type FleetFaultPolicy = 'rerun' | 'drop'

/** The fleet-fault policies, for flag validation. */
export const FLEET_FAULT_POLICIES: readonly FleetFaultPolicy[] = Object.freeze(['rerun', 'drop'])

/** True when one of the episode's tool calls was answered with a fleet status. */
export function hitFleetFault(t: Trajectory): boolean {
  return t.toolCalls.some((c) => c.status !== 'parse_error' && isRetriable(c.status))
}

/** Progress after each rollout. */
export interface RolloutProgress {
  done: number
  total: number
  correct: number
  failed: number
}

/** Options of {@link runDataset}. */
export interface RunDatasetOptions {
  items: readonly DatasetItem[]
  /** Rollouts per item (the oversampled group, 2G in the report). */
  n: number
  /** Rollouts kept per item by GRPO-RoC (G); `n` keeps all (RoC does not run). */
  keep: number
  /** Episodes at once over the whole dataset (default 64). */
  concurrency?: number
  /** Seed of RoC's draws (default 0). */
  seed?: number
  /** RoC's selection: `sample` (default, the report) or `deterministic` (the released code). */
  rocMode?: RocMode
  /**
   * How RoC's p_err counts a tool error: `status` (default, by the call's status) or `substring` (the released code).
   */
  rocErrorCount?: ErrorCountRule
  /** Negatives and positives RoC keeps at least (default 2 each, the released code). */
  rocMinNegatives?: number
  rocMinPositives?: number
  /** `grpo` (default) or `dr_grpo`. */
  advantage?: AdvantageMethod
  /** The std of GRPO's advantage: `population` (default) or `unbiased` (verl). */
  advantageStd?: AdvantageStd
  /** An episode whose tool call met a fleet fault: `rerun` (default) or `drop`. */
  fleetFaults?: FleetFaultPolicy
  /** Re-runs of one rollout after fleet faults before it is dropped (default 2). */
  maxReruns?: number
  /** Everything {@link runEpisode} takes but the prompt. */
  episode: Omit<EpisodeOptions, 'prompt'>
  /** Give each episode its own fleet session (Python state kept across its turns), opened through this client. */
  sessions?: { client: SessionOpener; ttl_s?: number }
  /**
   * Reward of a trajectory (default: {@link codeReward} of the model's program for an item with tests, through
   * `judge`; else {@link mathReward} of the model's text against the reference).
   */
  reward?: (t: Trajectory, item: DatasetItem) => RewardOutcome | Promise<RewardOutcome>
  /** The fleet's judge of code items (a `SandfleetClient`); needed when an item has tests and `reward` is not given. */
  judge?: Judge
  /** The code reward's options: `partial` (tests passed over total), `timeoutMs` (a test's, when none is given). */
  codeReward?: CodeRewardOptions
  /** Receives every record (kept ones, and the others when `writeAll`). */
  onRecord: (r: TrajectoryRecord) => Promise<void> | void
  /** Also hand over the rollouts RoC did not keep (with `kept: false`). */
  writeAll?: boolean
  /** DAPO's soft overlong punishment added to each reward (response tokens past `maxLength − cacheLength`). */
  overlong?: { maxLength: number; cacheLength: number }
  /**
   * Reject groups whose rewards are all equal (no learning signal) before RoC downsamples, as DAPO and rStar2-Agent do;
   * counted in the summary.
   */
  dropEqualRewardGroups?: boolean
  onProgress?: (p: RolloutProgress) => void
}

/** What a dataset run came to. */
export interface RolloutSummary {
  prompts: number
  rollouts: number
  /** Rollouts that failed in the engine (not counted in the figures). */
  failed: number
  kept: number
  /** Groups rejected because every reward was equal (with `dropEqualRewardGroups`). */
  groups_dropped: number
  /** Episodes run again because a tool call met a fleet fault. */
  fleet_fault_reruns: number
  /** Episodes left out because a tool call met a fleet fault (policy `drop`, or re-runs used up). */
  fleet_fault_dropped: number
  /** Rewards the fleet failed to give (a judge's fleet verdict after the client's retries), each judged again. */
  reward_fleet_faults: number
  /** Rollouts left out because they could not be scored (a dataset's tests the fleet refused). */
  unscored: number
  /** Why the first rollout left out unscored was (the fleet's message). */
  first_unscored: string | null
  /** Mean correctness reward over all rollouts (before any overlong penalty). */
  accuracy: number
  /** Unbiased pass@k over items with a reference, for k = 1 and k = n. */
  pass_at_k: Record<string, number>
  tool_calls: number
  /** Code errors and parse errors over the calls the fleet answered itself. */
  tool_error_ratio: number | null
  /** Calls answered with a fleet status (overloaded, queue_timeout, infra_error) in the rollouts scored. */
  tool_fleet_faults: number
  turns_mean: number
  response_length_mean: number
  response_length_max: number
  stop_reasons: Record<string, number>
  wall_s: number
  /** The first engine failure's message, when a rollout failed. */
  first_error: string | null
}

/** Unbiased pass@k of one item with `c` correct of `n` (Chen et al. 2021). */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1
  let p = 1
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i
  return 1 - p
}

/** Runs the dataset; see the module comment. */
export async function runDataset(options: RunDatasetOptions): Promise<RolloutSummary> {
  const started = Date.now()
  const { items, n } = options
  const keep = Math.min(options.keep, n)
  const limiter = new Limiter(options.concurrency ?? 64)
  const seed = options.seed ?? 0
  const rocOptions: Omit<RocOptions, 'random'> = {
    keep,
    ...(options.rocMode ? { mode: options.rocMode } : {}),
    ...(options.rocErrorCount ? { errorCount: options.rocErrorCount } : {}),
    ...(options.rocMinNegatives !== undefined ? { minNegatives: options.rocMinNegatives } : {}),
    ...(options.rocMinPositives !== undefined ? { minPositives: options.rocMinPositives } : {})
  }
  const downsample = keep < n // n keeps all: no RoC
  if (downsample) checkRocOptions(rocOptions) // before any rollout runs
  const judge = options.judge
  if (options.reward === undefined && judge === undefined && items.some((i) => i.tests !== undefined))
    throw new TrainerError(
      TRAINER_ERROR_CODES.BAD_INPUT,
      'the dataset has code problems (tests): their reward needs the fleet as a judge (runDataset judge)',
      400
    )
  const reward =
    options.reward ??
    (async (t: Trajectory, item: DatasetItem): Promise<RewardOutcome> => {
      if (item.tests !== undefined) {
        const r = await codeReward(judge as Judge, modelText(t), item.tests, options.codeReward ?? {})
        return {
          reward: r.reward,
          answer: r.code ?? null,
          fleetFault: r.fleetFault,
          ...(r.unscored === undefined ? {} : { unscored: r.unscored })
        }
      }
      if (item.reference === null) return { reward: 0, answer: null }
      const r = mathReward(modelText(t), item.reference)
      return { reward: r.reward, answer: r.answer ?? null }
    })
  const scorable = (item: DatasetItem): boolean => item.reference !== null || item.tests !== undefined
  const progress: RolloutProgress = { done: 0, total: items.length * n, correct: 0, failed: 0 }
  // only the figures of each rollout are kept for the summary, not its tokens
  const all: Array<{
    reward: number
    errors: number
    counted: number
    calls: number
    faults: number
    turns: number
    length: number
    stop: string
  }> = []
  const passes: Record<string, number[]> = { 1: [], [n]: [] }
  let kept = 0
  let dropped = 0
  let reruns = 0
  let faultDropped = 0
  let rewardFaults = 0
  let unscored = 0
  let firstUnscored: string | null = null
  const maxReruns = options.fleetFaults === 'drop' ? 0 : (options.maxReruns ?? 2)
  let firstError: string | null = null
  let writing = Promise.resolve()

  await Promise.all(
    items.map(async (item, group) => {
      const results = await Promise.all(
        Array.from(
          { length: n },
          async (_, sample) =>
            await limiter.run(async () => {
              const session = options.sessions
                ? new EpisodeSession(
                    options.sessions.client,
                    options.sessions.ttl_s !== undefined ? { ttl_s: options.sessions.ttl_s } : {}
                  )
                : undefined
              try {
                const sampling = options.episode.sampling
                // one seed for every rollout of a group would make them one rollout: each gets its own
                const seeded =
                  sampling?.seed !== undefined
                    ? { sampling: { ...sampling, seed: sampling.seed + group * n + sample } }
                    : {}
                let t = await runEpisode({
                  ...options.episode,
                  ...seeded,
                  ...(session ? { fleet: session } : {}),
                  prompt: item.messages
                })
                for (let rerun = 0; hitFleetFault(t); rerun++) {
                  if (rerun >= maxReruns) {
                    faultDropped++
                    progress.done++
                    options.onProgress?.({ ...progress })
                    return undefined
                  }
                  reruns++
                  await session?.close()
                  t = await runEpisode({
                    ...options.episode,
                    ...seeded,
                    ...(session ? { fleet: session } : {}),
                    prompt: item.messages
                  })
                }
                let r = await reward(t, item)
                // a reward the fleet failed to give is asked again, then the rollout left out: never scored 0
                for (let again = 0; r.fleetFault === true; again++) {
                  rewardFaults++
                  if (again >= maxReruns) break
                  r = await reward(t, item)
                }
                if (r.fleetFault === true || r.unscored !== undefined) {
                  if (r.fleetFault === true) faultDropped++
                  else unscored++
                  firstUnscored ??= r.unscored ?? 'the fleet could not judge it'
                  progress.done++
                  options.onProgress?.({ ...progress })
                  return undefined
                }
                progress.done++
                if (r.reward > 0) progress.correct++
                options.onProgress?.({ ...progress })
                const shaped =
                  r.reward +
                  (options.overlong
                    ? overlongPenalty(t.responseIds.length, options.overlong.maxLength, options.overlong.cacheLength)
                    : 0)
                return { t, sample, correct: r.reward, reward: shaped, answer: r.answer }
              } catch (err) {
                if (err instanceof TrainerError && err.code === TRAINER_ERROR_CODES.ABORTED) throw err
                firstError ??= (err as Error).message
                progress.done++
                progress.failed++
                options.onProgress?.({ ...progress })
                return undefined
              } finally {
                await session?.close()
              }
            })
        )
      )
      const ok = results.filter((r) => r !== undefined)
      for (const r of ok) {
        const tools = toolStatistics(r.t)
        all.push({
          reward: r.correct,
          errors: tools.errors,
          counted: tools.counted,
          calls: r.t.toolCalls.length,
          faults: r.t.toolCalls.filter((c) => c.status !== 'parse_error' && isRetriable(c.status)).length,
          turns: r.t.turns.length,
          length: r.t.responseIds.length,
          stop: r.t.stopReason
        })
      }
      if (scorable(item) && ok.length > 0) {
        const c = ok.filter((r) => r.correct > 0).length
        passes[1].push(passAtK(ok.length, c, 1))
        passes[n].push(passAtK(ok.length, c, Math.min(n, ok.length)))
      }
      // all-equal groups go before downsampling: RoC would keep no signal from them anyway
      const rejected =
        options.dropEqualRewardGroups === true && ok.length > 0 && hasEqualRewards(ok.map((r) => r.reward))
      if (rejected) dropped++
      // a generator per group: the draws do not depend on which group finished first
      const random = seededRandom((seed * 1_000_003 + group) >>> 0)
      const keptIdx = new Set(
        rejected
          ? []
          : downsample
            ? grpoRoc(
                ok.map((r) => toRocRollout(r.t, r.correct)),
                { ...rocOptions, random }
              )
            : ok.map((_, i) => i)
      )
      const keptList = ok.filter((_, i) => keptIdx.has(i))
      const adv = groupAdvantages(
        keptList.map((r) => r.reward),
        options.advantage ?? 'grpo',
        options.advantageStd ? { std: options.advantageStd } : {}
      )
      kept += keptList.length
      const records = ok.flatMap((r) => {
        const k = keptList.indexOf(r)
        if (k < 0 && !options.writeAll) return []
        return [
          trajectoryRecord(r.t, {
            group,
            sample: r.sample,
            reward: r.reward,
            advantage: k >= 0 ? adv[k] : null,
            kept: k >= 0,
            answer: r.answer,
            reference: item.reference
          })
        ]
      })
      writing = writing.then(async () => {
        for (const rec of records) await options.onRecord(rec)
      })
      await writing
    })
  )

  const counted = all.reduce((a, s) => a + s.counted, 0)
  const lengths = all.map((r) => r.length)
  const mean = (xs: number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length)
  const stopReasons: Record<string, number> = {}
  for (const r of all) stopReasons[r.stop] = (stopReasons[r.stop] ?? 0) + 1
  return {
    prompts: items.length,
    rollouts: all.length,
    failed: progress.failed,
    kept,
    groups_dropped: dropped,
    fleet_fault_reruns: reruns,
    fleet_fault_dropped: faultDropped,
    reward_fleet_faults: rewardFaults,
    unscored,
    first_unscored: firstUnscored,
    accuracy: mean(all.map((r) => r.reward)),
    pass_at_k: Object.fromEntries(Object.entries(passes).map(([k, xs]) => [k, mean(xs)])),
    tool_calls: all.reduce((a, r) => a + r.calls, 0),
    tool_error_ratio: counted === 0 ? null : all.reduce((a, r) => a + r.errors, 0) / counted,
    tool_fleet_faults: all.reduce((a, r) => a + r.faults, 0),
    turns_mean: mean(all.map((r) => r.turns)),
    response_length_mean: mean(lengths),
    response_length_max: lengths.reduce((a, b) => Math.max(a, b), 0),
    stop_reasons: stopReasons,
    wall_s: (Date.now() - started) / 1000,
    first_error: firstError
  }
}
