import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { startFakeFleet } from '@sandfleet/client/testing'
import { ChatCompletionsEngine, RSTAR2_PYTHON_TOOL, runChatEpisode } from '@sandfleet/trainer'
import { startScriptedEngine } from '@sandfleet/trainer'

test('a chat episode: the tool result goes back as a message, the answer ends it', async () => {
  const server = await startScriptedEngine((ctx) =>
    ctx.prompt.includes('<tool_response>\n1024\n')
      ? 'It is <answer>\\boxed{1024}</answer>'
      : 'Compute. <tool_call>{"name":"python","arguments":{"code":"print(2**10)"}}</tool_call> trailing text never sent'
  )
  const fleet = await startFakeFleet()
  const engine = new ChatCompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  try {
    const t = await runChatEpisode({
      engine,
      fleet: client,
      messages: [{ role: 'user', content: '2^10?' }],
      timeoutMs: 60_000
    }) // python3 takes seconds to start on a loaded machine
    assert.equal(t.stopReason, 'answer')
    assert.deepEqual(
      t.messages.map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant']
    )
    assert.equal(
      t.messages[1].content,
      'Compute. <tool_call>{"name":"python","arguments":{"code":"print(2**10)"}}</tool_call>',
      'cut at the stop string, which is kept'
    )
    assert.match(t.messages[2].content, /^<tool_response>\n1024\n/)
    assert.deepEqual(
      t.toolCalls.map((c) => c.status),
      ['ok']
    )
    assert.equal(t.answers, 1)
    assert.ok(t.turns[0].modelTokens > 0, 'logprobs counted the generated tokens')
    const tool = await runChatEpisode({
      engine,
      fleet: client,
      messages: [{ role: 'user', content: '2^10?' }],
      toolRole: 'tool',
      maxTurns: 1
    })
    assert.equal(tool.stopReason, 'max_turns')
    assert.equal(tool.toolCalls.length, 0)
    const chats = server.log.filter((e) => e.path === '/v1/chat/completions')
    assert.ok(
      chats.every((e) => e.body?.tools === undefined),
      'no tools given, none sent'
    )
    await runChatEpisode({
      engine,
      fleet: client,
      messages: [{ role: 'user', content: '2^10?' }],
      tools: [RSTAR2_PYTHON_TOOL],
      maxTurns: 1
    })
    assert.deepEqual(
      server.log.at(-1)?.body?.tools,
      [RSTAR2_PYTHON_TOOL],
      "the tool schemas go with each turn, for the server's chat template"
    )
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})
