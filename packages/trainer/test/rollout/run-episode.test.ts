import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { errorReply, startFakeFleet, type FakeBehavior } from '@sandfleet/client/testing'
import type { ExecResult } from '@sandfleet/protocol'
import {
  CompletionsEngine,
  decodedResponseText,
  errorPenalty,
  inlineToolTurn,
  runEpisode,
  toRocRollout,
  type Trajectory
} from '@sandfleet/trainer'
import { ScriptedTokenizer, scriptedLogprob, startScriptedEngine, type Script } from '@sandfleet/trainer'

const call = (code: string): string =>
  `<tool_call>${JSON.stringify({ name: 'python', arguments: { code } })}</tool_call>`
const ok = (stdout: string): ExecResult => ({
  status: 'ok',
  stdout,
  stderr: '',
  exit_code: 0,
  duration_ms: 1,
  queue_ms: 0,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {},
  runner: 'fake',
  sandbox: 'fake-0'
})
const byCode: FakeBehavior = (req) => {
  if (req.code.includes('1/0'))
    return {
      ...ok(''),
      status: 'error',
      exit_code: 1,
      stderr: 'Traceback...\nZeroDivisionError: division by zero',
      error: { type: 'ZeroDivisionError', message: 'division by zero' }
    }
  if (req.code.includes('while True'))
    return { ...ok(''), status: 'timeout', exit_code: null, error: { type: 'Timeout', message: 'exceeded' } }
  if (req.code.includes('overload'))
    return errorReply(429, 'overloaded', 'SF_ERR_RUNNER_OVERLOADED', 'busy', { 'retry-after': '0' })
  const m = /print\((\d+)\*\*(\d+)\)/.exec(req.code)
  return ok(m ? `${Number(m[1]) ** Number(m[2])}\n` : 'done\n')
}

async function withRig(
  script: Script,
  fn: (engine: CompletionsEngine, client: SandfleetClient, log: () => string[]) => Promise<void>,
  behavior: FakeBehavior = byCode,
  batchWindowMs = 2
): Promise<void> {
  const server = await startScriptedEngine(script)
  const fleet = await startFakeFleet(behavior)
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({
    url: fleet.url,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    batchWindowMs
  })
  try {
    await fn(engine, client, () => fleet.log.map((e) => e.path))
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
}

/** The mask lines up with the tokens: model spans decode to the turns' text, masked spans to tool text. */
function checkAlignment(t: Trajectory): void {
  assert.equal(t.lossMask.length, t.responseIds.length)
  assert.equal(t.logprobs.length, t.responseIds.length)
  const spans: Array<{ mask: number; ids: number[] }> = []
  t.responseIds.forEach((id, i) => {
    const last = spans.at(-1)
    if (last && last.mask === t.lossMask[i]) last.ids.push(id)
    else spans.push({ mask: t.lossMask[i], ids: [id] })
  })
  const model = spans.filter((s) => s.mask === 1)
  assert.equal(model.length, t.turns.length, 'one unmasked span per model turn')
  model.forEach((s, k) => assert.equal(ScriptedTokenizer.decode(s.ids).replace('<|im_end|>', ''), t.turns[k].text))
  t.responseIds.forEach((id, i) => assert.equal(t.logprobs[i], t.lossMask[i] === 1 ? scriptedLogprob(id) : 0))
  assert.equal(
    ScriptedTokenizer.decode(t.responseIds).replaceAll('<|im_end|>', ''),
    t.responseText.replaceAll('<|im_end|>', '')
  )
  assert.equal(
    decodedResponseText(t),
    ScriptedTokenizer.decode(t.responseIds),
    'the text the released RoC reads is the decoded response'
  )
  assert.equal(toRocRollout(t, 0).responseText, decodedResponseText(t))
}

test('a tool call runs on the fleet, its output is appended masked, and the answer ends the episode', async () => {
  const script: Script = (ctx) =>
    ctx.turn === 0
      ? `I will compute it. ${call('print(2**10)')}`
      : ctx.prompt.includes('<tool_response>\n1024\n\n</tool_response>')
        ? 'So <answer>\\boxed{1024}</answer>'
        : 'I did not see the output'
  await withRig(script, async (engine, client) => {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'What is 2^10?' }] })
    assert.equal(t.stopReason, 'answer')
    assert.equal(t.turns.length, 2)
    assert.deepEqual(
      t.toolCalls.map((c) => c.status),
      ['ok']
    )
    assert.deepEqual(
      t.turns.map((x) => x.toolStatuses),
      [['ok'], []]
    )
    assert.equal(t.answers, 1)
    assert.equal(
      ScriptedTokenizer.decode(t.promptIds),
      '<|im_start|>user\nWhat is 2^10?<|im_end|>\n<|im_start|>assistant\n'
    )
    const masked = ScriptedTokenizer.decode(t.responseIds.filter((_, i) => t.lossMask[i] === 0))
    assert.equal(
      masked,
      '<|im_end|>\n<|im_start|>user\n<tool_response>\n1024\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
      'exactly the tool turn is masked'
    )
    assert.equal(t.turns[1].toolTokens, 0)
    assert.equal(t.turns[0].toolTokens, ScriptedTokenizer.encode(masked).length)
    checkAlignment(t)
  })
})

test('a call that does not parse goes back to the model as a tool response saying why; nothing runs', async () => {
  const script: Script = (ctx) =>
    ctx.turn === 0
      ? '<tool_call>{"name": "python", "arguments": {"code": "print(1)"</tool_call>'
      : ctx.prompt.includes('Error: the tool call is not valid JSON')
        ? '<answer>\\boxed{1}</answer>'
        : 'no reason seen'
  await withRig(script, async (engine, client, log) => {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }] })
    assert.equal(t.stopReason, 'answer')
    assert.deepEqual(
      t.toolCalls.map((c) => c.status),
      ['parse_error']
    )
    assert.match(t.toolCalls[0].parseError ?? '', /not valid JSON/)
    assert.deepEqual(log(), [], 'the fleet saw no request')
    checkAlignment(t)
  })
})

test('code errors and timeouts become tool-result text; a fleet status is recorded and left out of p_err', async () => {
  const script: Script = (ctx) => {
    if (ctx.turn === 0) return `Divide. ${call('1/0')}`
    if (ctx.turn === 1) return `Loop. ${call('while True: pass')}`
    if (ctx.turn === 2) return `Again. ${call('overload()')}`
    return ctx.prompt.includes('ZeroDivisionError') &&
      ctx.prompt.includes('TimeoutError') &&
      ctx.prompt.includes('The tool is unavailable (overloaded)')
      ? '<answer>\\boxed{0}</answer>'
      : 'missing text'
  }
  await withRig(script, async (engine, client) => {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }], timeoutMs: 500 })
    assert.equal(t.stopReason, 'answer', 'the model read every failure as text')
    assert.deepEqual(
      t.turns.map((x) => x.toolStatuses),
      [['error'], ['timeout'], ['overloaded'], []]
    )
    assert.equal(t.toolCalls[2].result?.error?.message, 'busy')
    assert.equal(
      errorPenalty(toRocRollout(t, 1)),
      1,
      "two code errors of two counted calls; the overloaded call is the fleet's"
    )
    checkAlignment(t)
  })
})

test('the turn limit and the token budget end episodes', async () => {
  const forever: Script = () => `again ${call('print(2**3)')}`
  await withRig(forever, async (engine, client, log) => {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }], maxTurns: 3 })
    assert.equal(t.stopReason, 'max_turns')
    assert.equal(t.turns.length, 3)
    assert.equal(t.toolCalls.length, 2, "the last turn's call does not run: no turn would read it")
    assert.equal(log().length, 2)
    checkAlignment(t)

    const b = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'q' }],
      maxResponseTokens: 150
    })
    assert.equal(b.stopReason, 'token_budget')
    assert.ok(b.responseIds.length <= 150, `${b.responseIds.length} tokens within the budget of 150`)
    checkAlignment(b)

    const c = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'q' }],
      maxTokensPerTurn: 10
    })
    assert.equal(c.stopReason, 'turn_length')
    assert.equal(c.responseIds.length, 10)
  })
  await withRig(
    () => 'I have no idea.',
    async (engine, client) => {
      const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }] })
      assert.equal(t.stopReason, 'eos')
      assert.equal(t.answers, 0)
      assert.ok(t.lossMask.length > 0 && t.lossMask.every((m) => m === 1), "every response token is the model's")
    }
  )
})

test('inline Markdown format: the output fence continues the assistant text, masked', async () => {
  const script: Script = (ctx) =>
    ctx.prompt.includes('\n1024\n```') ? ' so \\boxed{1024}' : 'Compute:\n```python\nprint(2**10)\n```\n```output'
  await withRig(script, async (engine, client) => {
    const t = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'q' }],
      format: 'markdown',
      style: 'verl',
      template: (text) => `\n${text}\`\`\`\n`
    })
    assert.equal(t.stopReason, 'answer')
    assert.equal(ScriptedTokenizer.decode(t.responseIds.filter((_, i) => t.lossMask[i] === 0)), '\n1024\n```\n')
    assert.equal(typeof inlineToolTurn, 'function')
    checkAlignment(t)
  })
})

test("episodes run their tool calls independently: a fast episode never waits for a slow one's call", async () => {
  let releaseSlow!: () => void
  let released = false
  const slowGate = new Promise<void>((resolve) => {
    releaseSlow = () => {
      released = true
      resolve()
    }
  })
  const guard = setTimeout(() => releaseSlow(), 5000) // without independence the test fails here instead of hanging
  const behavior: FakeBehavior = async (req) => {
    if (req.code.includes('slow')) await slowGate
    return ok('x\n')
  }
  const script: Script = (ctx) =>
    ctx.turn === 0 ? call(ctx.prompt.includes('SLOW') ? 'slow()' : 'fast()') : '<answer>\\boxed{1}</answer>'
  try {
    await withRig(
      script,
      async (engine, client) => {
        const slowEpisode = runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'SLOW' }] })
        const fast = await Promise.all(
          [1, 2, 3].map(
            async () => await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'quick' }] })
          )
        )
        assert.equal(released, false, 'the fast episodes finished while the slow call was still held')
        assert.deepEqual(
          fast.map((t) => t.toolCalls.map((c) => c.status)),
          [['ok'], ['ok'], ['ok']]
        )
        assert.ok(client.coalesced.batches >= 1, 'the calls travelled in a coalesced batch')
        releaseSlow()
        const slow = await slowEpisode
        assert.deepEqual(
          slow.toolCalls.map((c) => c.status),
          ['ok']
        )
      },
      behavior,
      1000
    ) // a wide window: the four calls travel in one coalesced batch
  } finally {
    clearTimeout(guard)
  }
})

test('a prompt given as token ids goes to the engine as is; no chat template is applied', async () => {
  await withRig(
    () => '<answer>\\boxed{3}</answer>',
    async (engine, client) => {
      const promptIds = ScriptedTokenizer.encode('<|im_start|>user\n1+2<|im_end|>\n<|im_start|>assistant\n')
      const t = await runEpisode({
        engine,
        fleet: client,
        prompt: promptIds,
        sampling: { temperature: 0.7, stop: ['STOP'] }
      })
      assert.deepEqual(t.promptIds, promptIds)
      assert.equal(t.stopReason, 'answer')
    }
  )
})

test('several tool calls in one turn all run (no stop string cuts the second) up to maxParallelCalls', async () => {
  const two = `Both. ${call('print(2**3)')}\n${call('print(3**2)')}`
  const script: Script = (ctx) =>
    ctx.turn === 0
      ? two
      : ctx.prompt.includes('8\n') && ctx.prompt.includes('9\n')
        ? '<answer>\\boxed{17}</answer>'
        : '<answer>\\boxed{0}</answer>'
  await withRig(
    script,
    async (engine, client, log) => {
      const t = await runEpisode({
        engine,
        fleet: client,
        prompt: [{ role: 'user', content: 'q' }],
        maxParallelCalls: 2
      })
      assert.deepEqual(
        t.toolCalls.map((c) => c.status),
        ['ok', 'ok']
      )
      assert.equal(log().length > 0, true)
      assert.match(t.turns[1].text, /17/, 'the model read both outputs')
      checkAlignment(t)
      // the default is verl's: one call per turn, the turn stops at the first </tool_call>
      const one = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }] })
      assert.deepEqual(
        one.toolCalls.map((c) => c.status),
        ['ok']
      )
      assert.equal(one.turns[0].stoppedBy, '</tool_call>')
      // three calls with a limit of two: the third is answered with an error, not run
      const three = `${two}\n${call('print(4**2)')}`
      await withRig(
        () => three,
        async (e2, c2, log2) => {
          const x = await runEpisode({
            engine: e2,
            fleet: c2,
            prompt: [{ role: 'user', content: 'q' }],
            maxParallelCalls: 2,
            maxTurns: 2
          })
          assert.deepEqual(x.turns[0].toolStatuses, ['ok', 'ok', 'parse_error'])
          assert.match(x.toolCalls[2].parseError ?? '', /at most 2 tool calls/)
          assert.equal(log2().length >= 1, true)
        }
      )
    },
    byCode,
    1
  )
})

test('an unknown tool name is a tool error fed back to the model, never run as Python', async () => {
  const script: Script = (ctx) =>
    ctx.turn === 0
      ? '<tool_call>{"name": "bash", "arguments": {"code": "print(1)"}}</tool_call>'
      : ctx.prompt.includes('unknown tool "bash"')
        ? '<answer>\\boxed{1}</answer>'
        : 'not told'
  await withRig(script, async (engine, client, log) => {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'q' }] })
    assert.equal(t.stopReason, 'answer')
    assert.deepEqual(
      t.toolCalls.map((c) => c.status),
      ['parse_error']
    )
    assert.match(
      t.toolCalls[0].parseError ?? '',
      /unknown tool "bash"; the tools are python, python_code_with_standard_io/
    )
    assert.deepEqual(log(), [], 'nothing ran')
    const named = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'q' }],
      toolNames: ['bash']
    })
    assert.deepEqual(
      named.toolCalls.map((c) => c.status),
      ['ok'],
      'a name the caller declares runs'
    )
  })
})

test("an episode's tool calls carry its isolation level, and none when it names none (the runner's default)", async () => {
  const script: Script = (ctx) => (ctx.turn === 0 ? call('print(2**3)') : 'So <answer>\\boxed{8}</answer>')
  const levels: Array<string | undefined> = []
  const recording: FakeBehavior = (req, ctx) => {
    levels.push(req.isolation)
    return byCode(req, ctx)
  }
  await withRig(
    script,
    async (engine, client) => {
      await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: '2^3?' }], isolation: 'reuse' })
      await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: '2^3?' }] })
    },
    recording
  )
  assert.deepEqual(levels, ['reuse', undefined])
})
