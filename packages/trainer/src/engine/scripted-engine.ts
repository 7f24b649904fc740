/**
 * A small scripted OpenAI-compatible inference server, for tests and for trying `sandfleet rollout`
 * without a GPU (`--engine scripted` runs one with {@link arithmeticModel}): real HTTP (node:http on
 * 127.0.0.1) speaking `/v1/completions` (prompt as token ids; token ids and logprobs back, in
 * vLLM's `return_token_ids` shape or the older `token_id:N` strings), SGLang's `/generate`, `/tokenize` (text or chat
 * messages through a ChatML template), `/v1/chat/completions` and `/metrics`. A script decides
 * each reply's text from the decoded prompt; the server tokenizes it with {@link ScriptedTokenizer},
 * applies stop strings (kept in the output) and `max_tokens` as vLLM does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { renderChatml } from './chatml.ts'
import type { ChatMessage, ToolSchema } from './engine.ts'

/** Special tokens of the scripted tokenizer (ChatML, as Qwen). */
export const SPECIAL_TOKENS: Readonly<Record<string, number>> = Object.freeze({
  '<|endoftext|>': 0,
  '<|im_start|>': 1,
  '<|im_end|>': 2
})
/** The end-of-turn token the server appends when a reply ends naturally. */
export const EOS_ID = 2
const CHAR_BASE = 100

/** A character-level tokenizer with ChatML special tokens: one id per code point (id = 100 + code point). */
export const ScriptedTokenizer = {
  /** Token ids of `text`; special-token text maps to its id. */
  encode(text: string): number[] {
    const ids: number[] = []
    let i = 0
    outer: while (i < text.length) {
      if (text[i] === '<') {
        for (const [tok, id] of Object.entries(SPECIAL_TOKENS)) {
          if (text.startsWith(tok, i)) {
            ids.push(id)
            i += tok.length
            continue outer
          }
        }
      }
      const cp = text.codePointAt(i) as number
      ids.push(CHAR_BASE + cp)
      i += cp > 0xffff ? 2 : 1
    }
    return ids
  },
  /** Text of `ids`. */
  decode(ids: readonly number[]): string {
    const names = Object.fromEntries(Object.entries(SPECIAL_TOKENS).map(([k, v]) => [v, k]))
    return ids.map((id) => (id < CHAR_BASE ? (names[id] ?? '') : String.fromCodePoint(id - CHAR_BASE))).join('')
  },
  /** ChatML rendering of messages, tool schemas in the system turn (the library's {@link renderChatml}). */
  chatml(
    messages: ReadonlyArray<{ role: string; content: string }>,
    addGenerationPrompt = true,
    tools?: readonly ToolSchema[]
  ): string {
    return renderChatml(messages as readonly ChatMessage[], addGenerationPrompt, tools)
  }
}

/** The logprob the server gives token `id`: a pure function of the id, so tests can check alignment. */
export function scriptedLogprob(id: number): number {
  return -((id % 97) + 1) / 100
}

/** What a script sees of one request. */
export interface ScriptContext {
  /** The decoded prompt (token ids decoded, or chat messages rendered as ChatML). */
  prompt: string
  /** The request body. */
  body: Record<string, unknown>
  /** 0-based index of this generation request on the server. */
  call: number
  /** Assistant turns already in the prompt (0 on the first turn of an episode). */
  turn: number
  /** `completions` or `chat`. */
  route: 'completions' | 'chat'
}

/** A scripted reply: its text (the server appends the end-of-turn token unless `eos: false`). */
export interface ScriptedReply {
  text: string
  /** End with the EOS token when no stop string or `max_tokens` cuts it first (default true). */
  eos?: boolean
  /** Answer after this long, ms. */
  delayMs?: number
  /** Answer with this HTTP status and an error body instead. */
  http?: number
}

/** Decides the reply to one generation request. */
export type Script = (ctx: ScriptContext) => string | ScriptedReply | Promise<string | ScriptedReply>

/** Options of {@link startScriptedEngine}. */
export interface ScriptedEngineOptions {
  /** Token ids come back as vLLM's `token_ids` (default) or as `token_id:N` strings in `logprobs.tokens`. */
  tokenIdsAs?: 'token_ids' | 'token_strings'
  /** Body of `/metrics`. */
  metrics?: () => string
  /**
   * Answer `/tokenize` with messages (default true; false makes the server act as one whose tokenizer takes only text).
   */
  tokenizeMessages?: boolean
}

/** A request the server received. */
export interface ScriptedLogEntry {
  path: string
  body: Record<string, unknown> | null
}

/** A running scripted engine. */
export interface ScriptedEngine {
  url: string
  /** Every request, in order. */
  log: ScriptedLogEntry[]
  /** Most generation requests in flight at once so far. */
  maxInFlight: () => number
  close: () => Promise<void>
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  let text = ''
  for await (const chunk of req) text += chunk as string
  return text.length > 0 ? (JSON.parse(text) as Record<string, unknown>) : null
}

function send(res: ServerResponse, http: number, body: unknown, type = 'application/json'): void {
  res.writeHead(http, { 'content-type': type })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

interface Cut {
  ids: number[]
  text: string
  finish: 'stop' | 'length'
  stopReason: string | null
}

/** Applies stop strings (kept), EOS and max_tokens the way vLLM does for one reply. */
function cutReply(reply: ScriptedReply, stop: string[], maxTokens: number): Cut {
  let text = reply.text
  let stopReason: string | null = null
  let best = -1
  for (const s of stop) {
    const at = text.indexOf(s)
    if (at >= 0 && (best < 0 || at < best)) {
      best = at
      stopReason = s
    }
  }
  if (stopReason !== null) text = text.slice(0, best + stopReason.length)
  let ids = ScriptedTokenizer.encode(text)
  if (stopReason === null && reply.eos !== false) ids.push(EOS_ID)
  if (ids.length > maxTokens) {
    ids = ids.slice(0, maxTokens)
    return { ids, text: ScriptedTokenizer.decode(ids), finish: 'length', stopReason: null }
  }
  return { ids, text: ScriptedTokenizer.decode(ids.filter((id) => id !== EOS_ID)), finish: 'stop', stopReason }
}

/** Starts the scripted server on 127.0.0.1 (a random port). */
export async function startScriptedEngine(
  script: Script,
  options: ScriptedEngineOptions = {}
): Promise<ScriptedEngine> {
  const log: ScriptedLogEntry[] = []
  let calls = 0
  let inFlight = 0
  let maxInFlight = 0

  async function reply(
    prompt: string,
    body: Record<string, unknown>,
    route: ScriptContext['route']
  ): Promise<ScriptedReply> {
    const turn = prompt.split('<|im_start|>assistant\n').length - 2
    const out = await script({ prompt, body, call: calls++, turn: Math.max(0, turn), route })
    const r = typeof out === 'string' ? { text: out } : out
    if (r.delayMs) await new Promise((resolve) => setTimeout(resolve, r.delayMs))
    return r
  }

  const server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : null
      const path = new URL(req.url ?? '/', 'http://x').pathname
      log.push({ path, body })
      if (path === '/metrics' && req.method === 'GET') {
        send(res, 200, options.metrics?.() ?? '', 'text/plain; version=0.0.4')
        return
      }
      if (path === '/tokenize' && body) {
        let text: string
        if (Array.isArray(body.messages)) {
          if (options.tokenizeMessages === false) {
            send(res, 400, { object: 'error', message: 'messages are not supported' })
            return
          }
          text = ScriptedTokenizer.chatml(
            body.messages as Array<{ role: string; content: string }>,
            body.add_generation_prompt !== false,
            body.tools as ToolSchema[] | undefined
          )
        } else text = String(body.prompt ?? '')
        const tokens = ScriptedTokenizer.encode(text)
        send(res, 200, { count: tokens.length, max_model_len: 32768, tokens })
        return
      }
      if (path === '/v1/completions' && body) {
        const prompt = body.prompt
        if (!Array.isArray(prompt) || !prompt.every((x) => Number.isInteger(x))) {
          send(res, 400, { object: 'error', message: 'this scripted server takes prompts as token ids' })
          return
        }
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        try {
          const r = await reply(ScriptedTokenizer.decode(prompt as number[]), body, 'completions')
          if (r.http) {
            send(res, r.http, { object: 'error', message: r.text })
            return
          }
          const cut = cutReply(r, (body.stop as string[] | undefined) ?? [], Number(body.max_tokens ?? 16))
          const logprobs = cut.ids.map(scriptedLogprob)
          const choice =
            options.tokenIdsAs === 'token_strings'
              ? {
                  index: 0,
                  text: cut.text,
                  finish_reason: cut.finish,
                  stop_reason: cut.stopReason,
                  logprobs: {
                    tokens: cut.ids.map((id) => `token_id:${id}`),
                    token_logprobs: logprobs,
                    top_logprobs: null,
                    text_offset: []
                  }
                }
              : {
                  index: 0,
                  text: cut.text,
                  token_ids: cut.ids,
                  finish_reason: cut.finish,
                  stop_reason: cut.stopReason,
                  logprobs: {
                    tokens: cut.ids.map((id) => ScriptedTokenizer.decode([id])),
                    token_logprobs: logprobs,
                    top_logprobs: null,
                    text_offset: []
                  }
                }
          send(res, 200, {
            id: `cmpl-${calls}`,
            object: 'text_completion',
            model: body.model,
            choices: [choice],
            usage: { prompt_tokens: prompt.length, completion_tokens: cut.ids.length }
          })
        } finally {
          inFlight--
        }
        return
      }
      if (path === '/generate' && body) {
        // SGLang's native endpoint
        const ids = body.input_ids
        if (!Array.isArray(ids)) {
          send(res, 400, { error: 'input_ids required' })
          return
        }
        const sp = (body.sampling_params ?? {}) as Record<string, unknown>
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        try {
          const r = await reply(ScriptedTokenizer.decode(ids as number[]), body, 'completions')
          if (r.http) {
            send(res, r.http, { error: { message: r.text } })
            return
          }
          const cut = cutReply(r, (sp.stop as string[] | undefined) ?? [], Number(sp.max_new_tokens ?? 128))
          const matched = cut.finish === 'length' ? undefined : (cut.stopReason ?? EOS_ID)
          send(res, 200, {
            text: cut.text,
            output_ids: cut.ids,
            meta_info: {
              id: `gen-${calls}`,
              prompt_tokens: ids.length,
              completion_tokens: cut.ids.length,
              finish_reason:
                cut.finish === 'length' ? { type: 'length', length: cut.ids.length } : { type: 'stop', matched },
              output_token_logprobs: body.return_logprob
                ? cut.ids.map((id) => [scriptedLogprob(id), id, null])
                : undefined
            }
          })
        } finally {
          inFlight--
        }
        return
      }
      if (path === '/v1/chat/completions' && body) {
        inFlight++
        maxInFlight = Math.max(maxInFlight, inFlight)
        try {
          const r = await reply(
            ScriptedTokenizer.chatml(body.messages as Array<{ role: string; content: string }>),
            body,
            'chat'
          )
          if (r.http) {
            send(res, r.http, { object: 'error', message: r.text })
            return
          }
          const cut = cutReply(r, (body.stop as string[] | undefined) ?? [], Number(body.max_tokens ?? 16))
          const content = cut.ids
            .filter((id) => id !== EOS_ID)
            .map((id) => ({ token: ScriptedTokenizer.decode([id]), logprob: scriptedLogprob(id) }))
          send(res, 200, {
            id: `chat-${calls}`,
            object: 'chat.completion',
            model: body.model,
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: cut.text },
                finish_reason: cut.finish,
                logprobs: body.logprobs ? { content } : null
              }
            ]
          })
        } finally {
          inFlight--
        }
        return
      }
      if (path === '/v1/models') {
        send(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model' }] })
        return
      }
      send(res, 404, { object: 'error', message: `no route ${req.method} ${path}` })
    })().catch((err) => {
      if (!res.headersSent) send(res, 500, { object: 'error', message: String(err) })
      else res.destroy()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    maxInFlight: () => maxInFlight,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
