/**
 * The rollout scheduler simulation's scenario: agentic multi-turn rollouts of one RL step, with
 * long-tailed turn lengths (most turns short, a few near the limit), tool calls between turns
 * whose output joins the context and whose latency is long-tailed too.
 */
import { seededRandom } from '@sandfleet/trainer'

/** Parameters of the workload. */
export interface Workload {
  trajectories: number
  seed: number
  /** Most tokens one turn may generate (the request's `max_tokens`). */
  maxTokensPerTurn: number
  /** Response budget of a trajectory, model and tool tokens (rStar2-Agent's first stage: 8K). */
  budget: number
  /** Median tokens of a turn (lognormal, with `turnSigma`). */
  turnMedian: number
  turnSigma: number
}

/**
 * rStar2-Agent-like defaults: turns of median 400 tokens (σ 1.2, so ~10% past 1,800), at most 4,096 a turn and 8,192 a
 * trajectory.
 */
export const DEFAULT_WORKLOAD: Workload = Object.freeze({
  trajectories: 512,
  seed: 1,
  maxTokensPerTurn: 4096,
  budget: 8192,
  turnMedian: 400,
  turnSigma: 1.2
})

/** One turn as the model will play it: tokens it generates (before limits), tool tokens and latency after it. */
export interface PlannedTurn {
  length: number
  toolTokens: number
  toolMs: number
}

/** A trajectory: its prompt, its turns, and where it is. */
export interface Trajectory {
  prompt: number
  turns: PlannedTurn[]
  /** Index of the turn to come. */
  turn: number
  /** Tokens of context now. */
  context: number
  /** Response tokens so far (model and tool). */
  response: number
  /** Simulated time it finished, ms. */
  doneAt: number
  /** Engine of its first turn (static assignment), and of its last turn. */
  engine: number
  lastEngine: number
}

function lognormal(random: () => number, median: number, sigma: number): number {
  const u = Math.max(1e-12, random())
  const v = random()
  return median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))
}

/**
 * The trajectories of `w.seed`: prompts of 200–800 tokens, 1–8 turns (geometric, mean ~2.5), 20–300 tool tokens and a
 * lognormal tool latency (median 100 ms, at most 10 s) after each turn.
 */
export function makeTrajectories(w: Workload): Trajectory[] {
  const random = seededRandom(w.seed)
  return Array.from({ length: w.trajectories }, () => {
    const nTurns = Math.min(8, 1 + Math.floor(-Math.log(Math.max(1e-12, random())) * 2))
    const turns = Array.from({ length: nTurns }, () => ({
      length: Math.max(8, Math.min(w.maxTokensPerTurn, Math.round(lognormal(random, w.turnMedian, w.turnSigma)))),
      toolTokens: 20 + Math.floor(random() * 280),
      toolMs: Math.min(10_000, lognormal(random, 100, 1))
    }))
    const prompt = 200 + Math.floor(random() * 600)
    return { prompt, turns, turn: 0, context: prompt, response: 0, doneAt: 0, engine: -1, lastEngine: -1 }
  })
}
