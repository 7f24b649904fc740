/**
 * What the rollout loop needs of an inference engine: token-in / token-out generation with the
 * sampled tokens' logprobs, and the tokenizer (chat template included). Adapters for vLLM and
 * SGLang's OpenAI-compatible servers are in `openai-completions.ts` and `openai-chat.ts`.
 */

/** A chat message, as OpenAI-compatible servers take them. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
}

/** A tool the model may call, as an OpenAI function schema (chat templates render these for the model). */
export interface ToolSchema {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

/** Options of {@link Engine.applyChatTemplate}. */
export interface ChatTemplateOptions {
  /** Open the assistant's turn at the end (default true). */
  addGenerationPrompt?: boolean
  /** Tool schemas the template renders into the prompt (`tools` of the chat template). */
  tools?: readonly ToolSchema[]
  signal?: AbortSignal
}

/** Sampling parameters of one generation. */
export interface SamplingParams {
  /** Most tokens to generate. */
  maxTokens: number
  temperature?: number
  topP?: number
  topK?: number
  seed?: number
  /** Stop strings; the stop string that ended a generation is kept in its output. */
  stop?: readonly string[]
}

/** One token-in / token-out generation request. */
export interface GenerateRequest extends SamplingParams {
  /** The whole context so far, as token ids. */
  promptIds: readonly number[]
  /**
   * Names the trajectory (the same for all its turns): a scheduler keeps its turns on one engine when it can, for the
   * prefix cache.
   */
  affinity?: string
  signal?: AbortSignal
}

/** Why a generation ended: a stop string or EOS (`stop`) or `maxTokens` (`length`). */
export type FinishReason = 'stop' | 'length'

/** What one generation produced. */
export interface Generation {
  /** Generated token ids (the stop string's tokens included). */
  tokenIds: number[]
  /** Log-probability of each generated token under the sampling policy; same length as `tokenIds`. */
  logprobs: number[]
  /** The generated text. */
  text: string
  finishReason: FinishReason
  /** The stop string that ended it, or null (EOS, a stop token, or `length`). */
  stoppedBy: string | null
}

/** A token-in / token-out inference engine. */
export interface Engine {
  /** Base URL (or a name) of the engine, for logs and the scheduler. */
  readonly url: string
  /** Generates a continuation of `promptIds`. */
  generate(req: GenerateRequest): Promise<Generation>
  /**
   * Token ids of `text`, without added special tokens (special-token text such as `<|im_start|>` still maps to its id).
   */
  tokenize(text: string, signal?: AbortSignal): Promise<number[]>
  /** Token ids of `messages` (and `tools`) through the model's chat template (`add_generation_prompt` by default). */
  applyChatTemplate(messages: readonly ChatMessage[], options?: ChatTemplateOptions): Promise<number[]>
  /** Releases connections; safe to call twice. */
  close(): Promise<void>
}

/** One chat-completion reply (the plain adapter: text in, text out). */
export interface ChatGeneration {
  text: string
  finishReason: FinishReason
  /** Log-probabilities of the generated tokens when the server returned them, else empty. */
  logprobs: number[]
}

/** A text-in / text-out chat engine (`/v1/chat/completions`). */
export interface ChatEngine {
  readonly url: string
  /** One assistant reply to `messages`; `tools` go to the server, whose chat template renders them. */
  chat(
    messages: readonly ChatMessage[],
    params: SamplingParams & { tools?: readonly ToolSchema[]; signal?: AbortSignal }
  ): Promise<ChatGeneration>
  close(): Promise<void>
}
