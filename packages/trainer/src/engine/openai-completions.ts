/**
 * {@link CompletionsEngine}: token-in / token-out through an OpenAI-compatible `/v1/completions`
 * (vLLM, SGLang). The prompt goes as token ids, the answer's token ids come back from vLLM's
 * `return_token_ids` (`choices[0].token_ids`) or, on older servers, from
 * `return_tokens_as_token_ids` (`"token_id:123"` strings in `logprobs.tokens`), with the sampled
 * tokens' logprobs. `/tokenize` gives token ids of text and of chat messages.
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { ChatMessage, ChatTemplateOptions, Engine, Generation, GenerateRequest, ToolSchema } from './engine.ts'
import { EngineHttp, type EngineHttpOptions } from './engine-http.ts'

/** Options of a {@link CompletionsEngine}. */
export interface CompletionsEngineOptions extends EngineHttpOptions {
  /** The served model name (`--served-model-name`). */
  model: string
  /**
   * Renders chat messages as text for servers whose `/tokenize` does not take `messages`
   * (the text is then tokenized). Default: the server applies its own chat template.
   */
  renderChat?: (messages: readonly ChatMessage[], addGenerationPrompt: boolean, tools?: readonly ToolSchema[]) => string
  /** Extra fields sent with every completion request (e.g. `repetition_penalty`). */
  extraBody?: Record<string, unknown>
}

interface CompletionChoice {
  text?: unknown
  token_ids?: unknown
  finish_reason?: unknown
  stop_reason?: unknown
  logprobs?: { tokens?: unknown; token_logprobs?: unknown } | null
}

function bad(message: string): TrainerError {
  return new TrainerError(TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE, message, 502)
}

function isIntArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((x) => Number.isInteger(x))
}

/** Reads the generated token ids and logprobs out of one completion choice. */
export function readCompletionChoice(choice: CompletionChoice): Generation {
  const lp = choice.logprobs ?? undefined
  let tokenIds: number[] | undefined
  if (isIntArray(choice.token_ids)) tokenIds = choice.token_ids
  else if (Array.isArray(lp?.tokens) && lp.tokens.every((t) => typeof t === 'string' && /^token_id:\d+$/.test(t))) {
    tokenIds = (lp.tokens as string[]).map((t) => Number(t.slice('token_id:'.length)))
  }
  if (tokenIds === undefined)
    throw bad(
      'the completion has no token ids: the server must support return_token_ids (vLLM ≥ 0.10.2) or return_tokens_as_token_ids'
    )
  const raw = lp?.token_logprobs
  if (!Array.isArray(raw) || raw.length !== tokenIds.length)
    throw bad(`the completion has ${Array.isArray(raw) ? raw.length : 'no'} logprobs for ${tokenIds.length} tokens`)
  const logprobs = raw.map((x) => (typeof x === 'number' && Number.isFinite(x) ? x : 0))
  const stop = choice.stop_reason
  return {
    tokenIds,
    logprobs,
    text: typeof choice.text === 'string' ? choice.text : '',
    finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
    stoppedBy: typeof stop === 'string' ? stop : null
  }
}

/** A token-in / token-out {@link Engine} over `/v1/completions` and `/tokenize`. */
export class CompletionsEngine implements Engine {
  readonly url: string
  /** The served model name. */
  readonly model: string
  private readonly http: EngineHttp
  private readonly renderChat: CompletionsEngineOptions['renderChat']
  private readonly extraBody: Record<string, unknown>

  /** An engine adapter; it connects lazily. */
  constructor(options: CompletionsEngineOptions) {
    this.http = new EngineHttp(options)
    this.url = this.http.url
    this.model = options.model
    this.renderChat = options.renderChat
    this.extraBody = options.extraBody ?? {}
  }

  /**
   * One completion of `promptIds`; stop strings stay in the output (`include_stop_str_in_output`, SGLang's
   * `no_stop_trim`).
   */
  async generate(req: GenerateRequest): Promise<Generation> {
    const body: Record<string, unknown> = {
      ...this.extraBody,
      model: this.model,
      prompt: [...req.promptIds],
      max_tokens: req.maxTokens,
      n: 1,
      stream: false,
      logprobs: 1,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      include_stop_str_in_output: true,
      no_stop_trim: true,
      skip_special_tokens: false
    }
    if (req.temperature !== undefined) body.temperature = req.temperature
    if (req.topP !== undefined) body.top_p = req.topP
    if (req.topK !== undefined) body.top_k = req.topK
    if (req.seed !== undefined) body.seed = req.seed
    if (req.stop !== undefined && req.stop.length > 0) body.stop = [...req.stop]
    const answer = (await this.http.post('/v1/completions', body, req.signal)) as { choices?: CompletionChoice[] }
    const choice = answer?.choices?.[0]
    if (choice === undefined) throw bad('/v1/completions answered without choices')
    return readCompletionChoice(choice)
  }

  /** Token ids of `text` (`/tokenize`, `add_special_tokens: false`). */
  async tokenize(text: string, signal?: AbortSignal): Promise<number[]> {
    const answer = (await this.http.post(
      '/tokenize',
      { model: this.model, prompt: text, add_special_tokens: false },
      signal
    )) as { tokens?: unknown }
    if (!isIntArray(answer?.tokens)) throw bad('/tokenize answered without a tokens array')
    return answer.tokens
  }

  /**
   * Token ids of `messages` through the chat template (`/tokenize` with `messages`, or {@link
   * CompletionsEngineOptions.renderChat}).
   */
  async applyChatTemplate(messages: readonly ChatMessage[], options: ChatTemplateOptions = {}): Promise<number[]> {
    const addGenerationPrompt = options.addGenerationPrompt ?? true
    if (this.renderChat)
      return await this.tokenize(this.renderChat(messages, addGenerationPrompt, options.tools), options.signal)
    const tools = options.tools && options.tools.length > 0 ? { tools: options.tools } : {}
    const answer = (await this.http.post(
      '/tokenize',
      { model: this.model, messages, ...tools, add_generation_prompt: addGenerationPrompt, add_special_tokens: false },
      options.signal
    )) as { tokens?: unknown }
    if (!isIntArray(answer?.tokens)) throw bad('/tokenize (messages) answered without a tokens array')
    return answer.tokens
  }

  /** POSTs JSON to the server (for adapters of other endpoints of the same server). */
  protected async post(path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return await this.http.post(path, body, signal)
  }

  /** The server's Prometheus text (`/metrics`), for the scheduler. */
  async metricsText(signal?: AbortSignal): Promise<string> {
    return await this.http.getText('/metrics', signal)
  }

  /** Closes connections; safe to call twice. */
  async close(): Promise<void> {
    await this.http.close()
  }
}
