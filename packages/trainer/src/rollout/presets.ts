/**
 * Named settings of a whole rollout run: the group sizes and algorithm of {@link runDataset}, the
 * episode's tools, format and limits, and the prompt. `sandfleet rollout --preset NAME` starts
 * from one; every flag given overrides its field.
 *
 * `rstar2` is rStar2-Agent (arXiv 2508.20722) as its released recipe runs it on verl: 32 rollouts
 * per problem downsampled to 16 by GRPO-RoC with at least 2 negatives and 2 positives (the
 * report's draws and p_err by status, ours: `--roc-mode deterministic --roc-error-count
 * substring` is the released code's selection), groups of
 * equal rewards rejected first, GRPO advantages with verl's unbiased std, Hermes `<tool_call>`s
 * to one tool, `python_code_with_standard_io` (code and its standard input), whose schema the
 * chat template renders into the system turn, results in `<tool_response>` user turns, at most
 * 5 assistant turns of 8192 response tokens, one call per turn, tool output cut to 256 characters
 * in the middle (verl's defaults), and an answer in `<answer>` with a `\boxed{}`. The system prompt
 * and the problem's wrapper say what the released template says in our words: pass `--system
 * @FILE` and `--user-template @FILE` for the exact text a released checkpoint was trained on.
 */
import type { AdvantageMethod, AdvantageStd } from '../algo/advantages.ts'
import type { RocMode } from '../algo/grpo-roc.ts'
import type { ErrorCountRule } from '../algo/roc-penalties.ts'
import type { ToolSchema } from '../engine/engine.ts'
import type { ResultStyle, TruncateOptions } from '../tools/format.ts'
import type { ToolCallFormat } from '../tools/parse.ts'

/** Everything a preset sets. */
export interface RolloutPreset {
  n: number
  keep: number
  rocMode: RocMode
  rocErrorCount: ErrorCountRule
  rocMinNegatives: number
  rocMinPositives: number
  dropEqualRewardGroups: boolean
  advantage: AdvantageMethod
  advantageStd: AdvantageStd
  format: ToolCallFormat
  style: ResultStyle
  template: 'chatml' | 'inline'
  tools: readonly ToolSchema[]
  maxTurns: number
  maxResponseTokens: number
  maxParallelCalls: number
  truncate: TruncateOptions
  /** The system turn. */
  system: string
  /** The user turn around each problem: `{problem}` is replaced by the problem's text. */
  userTemplate: string
  /** Text the model's first turn starts after. */
  assistantPrefix: string
}

/** rStar2-Agent's one tool: Python with standard input, its output (or the exception) back. */
export const RSTAR2_PYTHON_TOOL: ToolSchema = Object.freeze({
  type: 'function',
  function: {
    name: 'python_code_with_standard_io',
    description:
      'Runs Python code, feeding `input` to its standard input, and returns what the code printed to standard output, or the error message when it raised.',
    parameters: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'The Python program to run; it may read standard input with input().' },
        input: { type: 'string', description: 'The text the program reads from standard input.' }
      },
      required: ['code', 'input']
    }
  }
})

/** The presets by name. */
export const ROLLOUT_PRESETS: Readonly<Record<'rstar2', RolloutPreset>> = Object.freeze({
  rstar2: {
    n: 32,
    keep: 16,
    rocMode: 'sample',
    rocErrorCount: 'status',
    rocMinNegatives: 2,
    rocMinPositives: 2,
    dropEqualRewardGroups: true,
    advantage: 'grpo',
    advantageStd: 'unbiased',
    format: 'hermes',
    style: 'rstar2',
    template: 'chatml',
    tools: [RSTAR2_PYTHON_TOOL],
    maxTurns: 5,
    maxResponseTokens: 8192,
    maxParallelCalls: 1,
    truncate: { maxChars: 256, side: 'middle' },
    system:
      'The User asks a question and the Assistant solves it. The Assistant reasons first, inside <reason> </reason> tags, and then gives the User the answer, inside <answer> </answer> tags: <reason> the reasoning </reason> <answer> the answer </answer>.',
    userTemplate:
      'Write your answer inside <answer> </answer> tags; the final answer is read from the \\boxed{} in it.\nThe problem:\n{problem}',
    assistantPrefix: '<reason>'
  }
})

/** The names of {@link ROLLOUT_PRESETS}. */
export type PresetName = keyof typeof ROLLOUT_PRESETS
