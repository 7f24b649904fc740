/**
 * {@link ChatCompletionsEngine}: the plain text-in / text-out adapter over an OpenAI-compatible
 * `/v1/chat/completions`, for engines that offer nothing else (no token ids: a trainer that needs
 * masks uses {@link CompletionsEngine}).
 */
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'
import type { ChatEngine, ChatGeneration, ChatMessage, SamplingParams, ToolSchema } from './engine.ts'
import { EngineHttp, type EngineHttpOptions } from './engine-http.ts'

/** Options of a {@link ChatCompletionsEngine}. */
export interface ChatCompletionsEngineOptions extends EngineHttpOptions {
  model: string
  /** Ask for the sampled tokens' logprobs (default true). */
  logprobs?: boolean
  /** Extra fields sent with every request. */
  extraBody?: Record<string, unknown>
}

/** A {@link ChatEngine} over `/v1/chat/completions`. */
export class ChatCompletionsEngine implements ChatEngine {
  readonly url: string
  readonly model: string
  private readonly http: EngineHttp
  private readonly logprobs: boolean
  private readonly extraBody: Record<string, unknown>

  /** An adapter; it connects lazily. */
  constructor(options: ChatCompletionsEngineOptions) {
    this.http = new EngineHttp(options)
    this.url = this.http.url
    this.model = options.model
    this.logprobs = options.logprobs ?? true
    this.extraBody = options.extraBody ?? {}
  }

  /** One assistant reply; stop strings stay in the text where the server supports it. */
  async chat(
    messages: readonly ChatMessage[],
    params: SamplingParams & { tools?: readonly ToolSchema[]; signal?: AbortSignal }
  ): Promise<ChatGeneration> {
    const body: Record<string, unknown> = {
      ...this.extraBody,
      model: this.model,
      messages,
      max_tokens: params.maxTokens,
      n: 1,
      stream: false,
      include_stop_str_in_output: true,
      ...(this.logprobs ? { logprobs: true } : {})
    }
    if (params.temperature !== undefined) body.temperature = params.temperature
    if (params.topP !== undefined) body.top_p = params.topP
    if (params.topK !== undefined) body.top_k = params.topK
    if (params.seed !== undefined) body.seed = params.seed
    if (params.stop !== undefined && params.stop.length > 0) body.stop = [...params.stop]
    // For the chat template to render. The episode parses the tool calls from the text, so a server
    // started with a tool-call parser should leave them in the content (`tool_choice` in extraBody).
    if (params.tools !== undefined && params.tools.length > 0) body.tools = params.tools
    const answer = (await this.http.post('/v1/chat/completions', body, params.signal)) as {
      choices?: Array<{
        message?: { content?: unknown }
        finish_reason?: unknown
        logprobs?: { content?: Array<{ logprob?: unknown }> } | null
      }>
    }
    const choice = answer?.choices?.[0]
    if (choice === undefined || typeof choice.message?.content !== 'string') {
      throw new TrainerError(
        TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE,
        '/v1/chat/completions answered without choices[0].message.content',
        502
      )
    }
    const logprobs = (choice.logprobs?.content ?? []).map((t) => (typeof t.logprob === 'number' ? t.logprob : 0))
    return {
      text: choice.message.content,
      finishReason: choice.finish_reason === 'length' ? 'length' : 'stop',
      logprobs
    }
  }

  /** Closes connections; safe to call twice. */
  async close(): Promise<void> {
    await this.http.close()
  }
}
