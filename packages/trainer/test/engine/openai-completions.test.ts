import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ChatCompletionsEngine,
  CompletionsEngine,
  isTransientEngineError,
  RetryingEngine,
  SglangEngine,
  TrainerError
} from '@sandfleet/trainer'
import { EOS_ID, ScriptedTokenizer, scriptedLogprob, startScriptedEngine } from '@sandfleet/trainer'

test('token-in / token-out: prompt ids go out, generated ids and their logprobs come back, the stop string kept', async () => {
  const server = await startScriptedEngine(() => 'Let me check. <tool_call>{"name":"python"}</tool_call> never sent')
  const engine = new CompletionsEngine({ url: server.url + '/v1', model: 'm' })
  try {
    const promptIds = await engine.applyChatTemplate([{ role: 'user', content: 'hi' }])
    assert.equal(ScriptedTokenizer.decode(promptIds), '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n')
    const gen = await engine.generate({ promptIds, maxTokens: 200, stop: ['</tool_call>'], temperature: 1, seed: 3 })
    assert.equal(gen.text, 'Let me check. <tool_call>{"name":"python"}</tool_call>')
    assert.deepEqual(gen.tokenIds, ScriptedTokenizer.encode(gen.text))
    assert.deepEqual(gen.logprobs, gen.tokenIds.map(scriptedLogprob))
    assert.equal(gen.finishReason, 'stop')
    assert.equal(gen.stoppedBy, '</tool_call>')
    const sent = server.log.find((e) => e.path === '/v1/completions')?.body
    assert.deepEqual(sent?.prompt, promptIds, 'the prompt travels as token ids')
    assert.equal(sent?.include_stop_str_in_output, true)
    assert.equal(sent?.seed, 3)
  } finally {
    await engine.close()
    await server.close()
  }
})

test('EOS ends with stoppedBy null and the EOS id in the tokens; max_tokens ends with length', async () => {
  const server = await startScriptedEngine((ctx) => (ctx.call === 0 ? 'done' : 'a long answer that will be cut'))
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  try {
    const a = await engine.generate({ promptIds: [1, 2], maxTokens: 50 })
    assert.deepEqual(a.tokenIds, [...ScriptedTokenizer.encode('done'), EOS_ID])
    assert.equal(a.stoppedBy, null)
    assert.equal(a.finishReason, 'stop')
    const b = await engine.generate({ promptIds: [1, 2], maxTokens: 6 })
    assert.equal(b.tokenIds.length, 6)
    assert.equal(b.finishReason, 'length')
    assert.equal(b.text, 'a long')
  } finally {
    await engine.close()
    await server.close()
  }
})

test('older servers: token ids read from "token_id:N" strings; tokenize without messages uses renderChat', async () => {
  const server = await startScriptedEngine(() => 'ok', { tokenIdsAs: 'token_strings', tokenizeMessages: false })
  const engine = new CompletionsEngine({
    url: server.url,
    model: 'm',
    renderChat: (msgs, gen) => ScriptedTokenizer.chatml(msgs, gen)
  })
  try {
    const ids = await engine.applyChatTemplate([{ role: 'user', content: 'x' }])
    assert.equal(ScriptedTokenizer.decode(ids), '<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n')
    assert.deepEqual(await engine.tokenize('<|im_end|>ab'), [2, 100 + 97, 100 + 98])
    const gen = await engine.generate({ promptIds: ids, maxTokens: 10 })
    assert.deepEqual(gen.tokenIds, [...ScriptedTokenizer.encode('ok'), EOS_ID])
    assert.deepEqual(gen.logprobs, gen.tokenIds.map(scriptedLogprob))
  } finally {
    await engine.close()
    await server.close()
  }
  const plain = await startScriptedEngine(() => 'ok', { tokenizeMessages: false })
  const engine2 = new CompletionsEngine({ url: plain.url, model: 'm' })
  try {
    await assert.rejects(
      engine2.applyChatTemplate([{ role: 'user', content: 'x' }]),
      (err: TrainerError) => err.code === 'SF_ERR_TRAINER_ENGINE_HTTP' && err.statusCode === 400
    )
  } finally {
    await engine2.close()
    await plain.close()
  }
})

test('engine failures are TrainerErrors with stable codes', async () => {
  const server = await startScriptedEngine(() => ({ text: 'model is sleeping', http: 503 }))
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  try {
    await assert.rejects(
      engine.generate({ promptIds: [1], maxTokens: 4 }),
      (err: TrainerError) =>
        err.code === 'SF_ERR_TRAINER_ENGINE_HTTP' && err.statusCode === 503 && /sleeping/.test(err.message)
    )
  } finally {
    await engine.close()
    await server.close()
  }
  const closedPort = new CompletionsEngine({ url: server.url, model: 'm' })
  try {
    await assert.rejects(
      closedPort.generate({ promptIds: [1], maxTokens: 4 }),
      (err: TrainerError) => err.code === 'SF_ERR_TRAINER_ENGINE_CONNECTION'
    )
  } finally {
    await closedPort.close()
  }
  const ac = new AbortController()
  const slow = await startScriptedEngine(() => ({ text: 'late', delayMs: 2000 }))
  const engine3 = new CompletionsEngine({ url: slow.url, model: 'm' })
  try {
    setTimeout(() => ac.abort(), 50)
    await assert.rejects(
      engine3.generate({ promptIds: [1], maxTokens: 4, signal: ac.signal }),
      (err: TrainerError) => err.code === 'SF_ERR_TRAINER_ABORTED'
    )
  } finally {
    await engine3.close()
    await slow.close()
  }
})

test('chat adapter: messages in, text and logprobs out, stop string kept', async () => {
  const server = await startScriptedEngine((ctx) =>
    ctx.prompt.endsWith('<|im_start|>assistant\n') ? 'x = 1 ```output and more' : 'no'
  )
  const engine = new ChatCompletionsEngine({ url: server.url, model: 'm' })
  try {
    const r = await engine.chat([{ role: 'user', content: 'go' }], { maxTokens: 100, stop: ['```output'] })
    assert.equal(r.text, 'x = 1 ```output')
    assert.equal(r.finishReason, 'stop')
    assert.deepEqual(r.logprobs, ScriptedTokenizer.encode(r.text).map(scriptedLogprob))
    assert.deepEqual((server.log.at(-1)?.body?.messages as unknown[]).length, 1)
  } finally {
    await engine.close()
    await server.close()
  }
})

test('SGLang /generate: input ids in, [logprob, id] triples out, the matched stop string kept', async () => {
  const server = await startScriptedEngine((ctx) => (ctx.call === 0 ? 'run <code>print(1)</code> never' : 'plain end'))
  const engine = new SglangEngine({ url: server.url, model: 'm' })
  try {
    const promptIds = await engine.applyChatTemplate([{ role: 'user', content: 'q' }])
    const a = await engine.generate({ promptIds, maxTokens: 100, stop: ['</code>'], seed: 4 })
    assert.equal(a.text, 'run <code>print(1)</code>')
    assert.equal(a.stoppedBy, '</code>')
    assert.deepEqual(a.tokenIds, ScriptedTokenizer.encode(a.text))
    assert.deepEqual(a.logprobs, a.tokenIds.map(scriptedLogprob))
    const sent = server.log.find((e) => e.path === '/generate')?.body
    assert.deepEqual(sent?.input_ids, promptIds)
    assert.equal((sent?.sampling_params as Record<string, unknown>).no_stop_trim, true)
    const b = await engine.generate({ promptIds, maxTokens: 100 })
    assert.deepEqual(
      [b.finishReason, b.stoppedBy, b.tokenIds.at(-1)],
      ['stop', null, EOS_ID],
      'EOS: matched is a token id, not a stop string'
    )
    const c = await engine.generate({ promptIds, maxTokens: 3 })
    assert.deepEqual([c.finishReason, c.tokenIds.length], ['length', 3])
  } finally {
    await engine.close()
    await server.close()
  }
})

test('RetryingEngine retries connection errors, 429 and 5xx with backoff, never other 4xx', async () => {
  const server = await startScriptedEngine((ctx) => {
    if (ctx.prompt.includes('flaky') && ctx.call < 2) return { text: 'restarting', http: 503 }
    if (ctx.prompt.includes('bad')) return { text: 'prompt too long', http: 400 }
    return 'fine'
  })
  const engine = new RetryingEngine(new CompletionsEngine({ url: server.url, model: 'm' }), {
    baseDelayMs: 1,
    maxDelayMs: 5
  })
  try {
    const ok = await engine.generate({ promptIds: ScriptedTokenizer.encode('flaky'), maxTokens: 10 })
    assert.equal(ok.text, 'fine')
    assert.equal(engine.retries, 2)
    await assert.rejects(
      engine.generate({ promptIds: ScriptedTokenizer.encode('bad'), maxTokens: 10 }),
      (e: TrainerError) => e.statusCode === 400
    )
    assert.equal(engine.retries, 2, "a 400 is the request's fault: not retried")
    assert.equal(isTransientEngineError(new TrainerError('SF_ERR_TRAINER_ENGINE_HTTP', 'x', 429)), true)
    assert.equal(isTransientEngineError(new TrainerError('SF_ERR_TRAINER_ENGINE_BAD_RESPONSE', 'x', 502)), false)
  } finally {
    await engine.close()
    await server.close()
  }
  const down = new RetryingEngine(new CompletionsEngine({ url: server.url, model: 'm' }), {
    maxAttempts: 3,
    baseDelayMs: 1,
    maxDelayMs: 2
  })
  try {
    await assert.rejects(
      down.generate({ promptIds: [1], maxTokens: 1 }),
      (e: TrainerError) => e.code === 'SF_ERR_TRAINER_ENGINE_CONNECTION'
    )
    assert.equal(down.retries, 2, 'three attempts, then the error')
  } finally {
    await down.close()
  }
})
