/**
 * {@link runEpisode}: the multi-turn agentic rollout of one prompt. Generate → detect tool calls →
 * run them through the fleet (this episode's calls only: no episode waits for another's) →
 * append the formatted results as masked tokens → generate again, until an answer, EOS, the
 * turn limit or the token budget.
 */
import { randomUUID } from 'node:crypto'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { ChatMessage, Engine, SamplingParams, ToolSchema } from '../engine/engine.ts'
import type { ToolCallFormat } from '../tools/parse.ts'
import type { ToolExecutor, ToolStepOptions } from './tool-step.ts'
import { endTurn, throwIfAborted, turnStops } from './tool-turn.ts'
import type { ToolCallRecord, Trajectory, TurnRecord, StopReason } from './trajectory.ts'
import { countAnswers } from './answer-tags.ts'
import { chatmlToolTurn, type TurnTemplate } from './turn-template.ts'

/** Options of {@link runEpisode}. */
export interface EpisodeOptions extends ToolStepOptions {
  engine: Engine
  /** The fleet: a `SandfleetClient`, or a `Session` for state kept across turns. */
  fleet: ToolExecutor
  /** The prompt: chat messages (through the engine's chat template) or token ids. */
  prompt: readonly ChatMessage[] | readonly number[]
  /** Tool schemas rendered into the prompt by the chat template; their names are the tools the model may call. */
  tools?: readonly ToolSchema[]
  /**
   * Text placed after the chat template's generation prompt, where the model's first turn starts (rStar2-Agent:
   * `<reason>`).
   */
  assistantPrefix?: string
  /** Tool-call format the model writes (default `hermes`). */
  format?: ToolCallFormat
  /** Text between a calling turn and the next (default ChatML user turn, as rStar2-Agent). */
  template?: TurnTemplate
  /** Most model turns (default 10). */
  maxTurns?: number
  /** Most response tokens, model and tool output together (default 8192). */
  maxResponseTokens?: number
  /** Most tokens one turn may generate (default: what is left of the budget). */
  maxTokensPerTurn?: number
  /** Sampling (temperature, top_p, seed); stop strings are added for the format. */
  sampling?: Omit<SamplingParams, 'maxTokens'>
  /** True when a turn holds a final answer (default: a closed `<answer>` block or a `\boxed{`). */
  hasAnswer?: (turnText: string) => boolean
  signal?: AbortSignal
}

/** Default answer test: a closed `<answer>…</answer>` block or a `\boxed{`. */
export function defaultHasAnswer(text: string): boolean {
  return /<answer>[\s\S]*?<\/answer>/.test(text) || text.includes('\\boxed{')
}

function isTokenIds(p: EpisodeOptions['prompt']): p is readonly number[] {
  return p.length > 0 && typeof p[0] === 'number'
}

/** Runs one episode and returns its {@link Trajectory}; engine failures and aborts throw {@link TrainerError}. */
export async function runEpisode(options: EpisodeOptions): Promise<Trajectory> {
  const started = Date.now()
  const { engine, fleet, signal } = options
  const format = options.format ?? 'hermes'
  const template = options.template ?? chatmlToolTurn
  const budget = options.maxResponseTokens ?? 8192
  const stop = turnStops(options.sampling, format, options.maxParallelCalls)

  const affinity = randomUUID()
  const promptIds = isTokenIds(options.prompt)
    ? [...options.prompt]
    : await engine.applyChatTemplate(options.prompt as readonly ChatMessage[], {
        addGenerationPrompt: true,
        ...(options.tools ? { tools: options.tools } : {}),
        ...(signal ? { signal } : {})
      })
  if (options.assistantPrefix && !isTokenIds(options.prompt))
    promptIds.push(...(await engine.tokenize(options.assistantPrefix, signal)))
  const step =
    options.toolNames === undefined && options.tools
      ? { ...options, toolNames: options.tools.map((t) => t.function.name) }
      : options
  const rules = {
    fleet,
    format,
    maxTurns: options.maxTurns ?? 10,
    hasAnswer: options.hasAnswer ?? defaultHasAnswer,
    step,
    ...(signal ? { signal } : {})
  }
  const responseIds: number[] = []
  const lossMask: number[] = []
  const logprobs: number[] = []
  const texts: string[] = []
  const turns: TurnRecord[] = []
  const toolCalls: ToolCallRecord[] = []
  let stopReason: StopReason | undefined

  while (stopReason === undefined) {
    throwIfAborted(signal)
    const left = budget - responseIds.length
    if (left <= 0) {
      stopReason = 'token_budget'
      break
    }
    const maxTokens = Math.min(left, options.maxTokensPerTurn ?? left)
    const gen = await engine.generate({
      ...options.sampling,
      promptIds: [...promptIds, ...responseIds],
      maxTokens,
      stop,
      affinity,
      ...(signal ? { signal } : {})
    })
    if (gen.logprobs.length !== gen.tokenIds.length)
      throw new TrainerError(
        TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE,
        'the engine returned a logprob count unlike its token count',
        502
      )
    responseIds.push(...gen.tokenIds)
    lossMask.push(...gen.tokenIds.map(() => 1))
    logprobs.push(...gen.logprobs)
    texts.push(gen.text)
    const turn: TurnRecord = {
      text: gen.text,
      modelTokens: gen.tokenIds.length,
      toolTokens: 0,
      toolText: '',
      finishReason: gen.finishReason,
      stoppedBy: gen.stoppedBy,
      toolStatuses: []
    }
    turns.push(turn)
    const ended = await endTurn(
      turn,
      turns.length - 1,
      responseIds.length >= budget ? 'token_budget' : 'turn_length',
      rules,
      toolCalls
    )
    if (!Array.isArray(ended)) {
      stopReason = ended
      break
    }
    throwIfAborted(signal)
    const toolText = template(ended.map((r) => r.text).join('\n'), { endedWithEos: gen.stoppedBy === null })
    const toolIds = await engine.tokenize(toolText, signal)
    if (responseIds.length + toolIds.length >= budget) {
      stopReason = 'token_budget'
      break
    }
    responseIds.push(...toolIds)
    lossMask.push(...toolIds.map(() => 0))
    logprobs.push(...toolIds.map(() => 0))
    texts.push(toolText)
    turn.toolTokens = toolIds.length
    turn.toolText = toolText
  }

  const answers = countAnswers(turns.map((t) => t.text))
  return {
    promptIds,
    responseIds,
    lossMask,
    logprobs,
    responseText: texts.join(''),
    turns,
    toolCalls,
    stopReason,
    answers,
    wallMs: Date.now() - started
  }
}
