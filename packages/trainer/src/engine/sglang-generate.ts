/**
 * {@link SglangEngine}: token-in / token-out through SGLang's native `/generate` (`input_ids` in;
 * `meta_info.output_token_logprobs` as `[logprob, token_id, text]` triples out, with
 * `return_logprob`), for SGLang servers whose OpenAI-compatible completions do not return token
 * ids. Tokenizing and the chat template go through `/tokenize`, as {@link CompletionsEngine}.
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { Generation, GenerateRequest } from './engine.ts'
import { CompletionsEngine, type CompletionsEngineOptions } from './openai-completions.ts'

function bad(message: string): TrainerError {
  return new TrainerError(TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE, message, 502)
}

interface GenerateAnswer {
  text?: unknown
  output_ids?: unknown
  meta_info?: { output_token_logprobs?: unknown; finish_reason?: { type?: unknown; matched?: unknown } | null }
}

/** Reads token ids, logprobs and the finish reason from one `/generate` answer. */
export function readSglangAnswer(answer: GenerateAnswer): Generation {
  const triples = answer?.meta_info?.output_token_logprobs
  if (!Array.isArray(triples))
    throw bad('/generate answered without meta_info.output_token_logprobs (send return_logprob)')
  const tokenIds: number[] = []
  const logprobs: number[] = []
  for (const t of triples) {
    if (!Array.isArray(t) || !Number.isInteger(t[1]))
      throw bad('an output_token_logprobs entry is not [logprob, token_id, text]')
    tokenIds.push(t[1] as number)
    logprobs.push(typeof t[0] === 'number' && Number.isFinite(t[0]) ? t[0] : 0)
  }
  const ids = answer.output_ids
  if (Array.isArray(ids) && ids.length === tokenIds.length && !ids.every((x, i) => x === tokenIds[i]))
    throw bad('output_ids and output_token_logprobs disagree')
  const finish = answer.meta_info?.finish_reason
  return {
    tokenIds,
    logprobs,
    text: typeof answer.text === 'string' ? answer.text : '',
    finishReason: finish?.type === 'length' ? 'length' : 'stop',
    stoppedBy: typeof finish?.matched === 'string' ? finish.matched : null
  }
}

/** SGLang's native `/generate` as an {@link Engine}. */
export class SglangEngine extends CompletionsEngine {
  /** An adapter; `model` is only used for `/tokenize`. */
  constructor(options: CompletionsEngineOptions) {
    super(options)
  }

  /** One generation through `/generate`; stop strings kept (`no_stop_trim`). */
  override async generate(req: GenerateRequest): Promise<Generation> {
    const sampling: Record<string, unknown> = {
      max_new_tokens: req.maxTokens,
      no_stop_trim: true,
      skip_special_tokens: false
    }
    if (req.temperature !== undefined) sampling.temperature = req.temperature
    if (req.topP !== undefined) sampling.top_p = req.topP
    if (req.topK !== undefined) sampling.top_k = req.topK
    if (req.seed !== undefined) sampling.sampling_seed = req.seed
    if (req.stop !== undefined && req.stop.length > 0) sampling.stop = [...req.stop]
    const answer = await this.post(
      '/generate',
      { input_ids: [...req.promptIds], sampling_params: sampling, return_logprob: true },
      req.signal
    )
    return readSglangAnswer(answer as GenerateAnswer)
  }
}
