/**
 * The trainer end to end: the scripted OpenAI-compatible engine (real HTTP) and a real fleet (a
 * gateway in front of a runner with the process backend: bubblewrap, real Python). Tool calls
 * run in real sandboxes; their outputs, errors and timeouts reach the model as masked tokens and
 * their statuses reach the trajectory; `sandfleet rollout` writes what a trainer reads.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SandfleetClient } from '@sandfleet/client'
import {
  CompletionsEngine,
  mathReward,
  modelText,
  rolloutCommand,
  runEpisode,
  type TrajectoryRecord
} from '@sandfleet/trainer'
import { ScriptedTokenizer, scriptedLogprob, startScriptedEngine, type Script } from '@sandfleet/trainer'
import { startFleet } from './helpers/fleet.ts'

const call = (code: string): string =>
  `<tool_call>${JSON.stringify({ name: 'python', arguments: { code } })}</tool_call>`

/** A model that runs code from its prompt, then answers with what the tool printed. */
const script: Script = (ctx) => {
  const responses = [...ctx.prompt.matchAll(/<tool_response>\n([\s\S]*?)\n<\/tool_response>/g)].map((m) => m[1])
  if (ctx.prompt.includes('CHAIN')) {
    if (ctx.turn === 0) return `Divide first. ${call('print(1/0)')}`
    if (ctx.turn === 1) return `Loop. ${call('while True:\n    pass')}`
    if (ctx.turn === 2) return '<tool_call>{"name": "python", "arguments": {"code": 1}}</tool_call>'
    return `<answer>\\boxed{${responses.length}}</answer>`
  }
  if (ctx.turn === 0)
    return `Let me compute. ${call('import sympy\nprint(sum(range(101)), sympy.Rational(1, 3) + sympy.Rational(1, 6))')}`
  const last = responses.at(-1) ?? ''
  const [total] = last.trim().split(/\s+/)
  return `The tool says ${last.trim()}. <answer>\\boxed{${total}}</answer>`
}

test('episodes against a real fleet: sandbox output comes back masked, code errors and timeouts by status', async () => {
  const fleet = await startFleet(['trainer-e2e-a'])
  const server = await startScriptedEngine(script)
  const engine = new CompletionsEngine({ url: server.url, model: 'scripted' })
  const client = new SandfleetClient({ url: fleet.url })
  try {
    const t = await runEpisode({ engine, fleet: client, prompt: [{ role: 'user', content: 'Sum 0..100.' }] })
    assert.equal(t.stopReason, 'answer')
    assert.deepEqual(
      t.toolCalls.map((c) => [c.status, c.result?.stdout]),
      [['ok', '5050 1/2\n']],
      'the sandbox ran sympy'
    )
    assert.equal(mathReward(modelText(t), '5050').reward, 1)
    const masked = ScriptedTokenizer.decode(t.responseIds.filter((_, i) => t.lossMask[i] === 0))
    assert.match(masked, /<tool_response>\n5050 1\/2\n\n<\/tool_response>/)
    t.responseIds.forEach((id, i) => assert.equal(t.logprobs[i], t.lossMask[i] === 1 ? scriptedLogprob(id) : 0))

    const chain = await runEpisode({
      engine,
      fleet: client,
      prompt: [{ role: 'user', content: 'CHAIN' }],
      timeoutMs: 500
    })
    assert.equal(chain.stopReason, 'answer')
    assert.deepEqual(
      chain.turns.map((x) => x.toolStatuses),
      [['error'], ['timeout'], ['parse_error'], []]
    )
    assert.match(chain.toolCalls[0].text, /ZeroDivisionError/)
    assert.match(chain.toolCalls[1].text, /TimeoutError/)
    assert.match(chain.toolCalls[2].text, /arguments\.code/)
    assert.equal(chain.toolCalls[0].result?.runner, 'trainer-e2e-a', 'the call ran on the real runner')
  } finally {
    await client.close()
    await engine.close()
    await server.close()
    await fleet.close()
  }
})

test('sandfleet rollout against a real fleet writes trajectories and a summary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-e2e-'))
  const fleet = await startFleet(['trainer-e2e-b'])
  const server = await startScriptedEngine(script)
  try {
    const dataset = join(dir, 'math.jsonl')
    writeFileSync(
      dataset,
      ['{"prompt": "Sum 0..100.", "answer": "5050"}', '{"prompt": "Sum 0..100 again.", "answer": "5051"}'].join('\n') +
        '\n'
    )
    const out = join(dir, 'traj.jsonl')
    const summary = await rolloutCommand(
      [
        '--engine',
        server.url,
        '--model',
        'scripted',
        '--dataset',
        dataset,
        '--fleet',
        fleet.url,
        '--n',
        '4',
        '--keep',
        '2',
        '--out',
        out,
        '--no-progress'
      ],
      { stdout: () => {}, stderr: { write: () => {} }, env: {} }
    )
    assert.ok(summary)
    assert.deepEqual(
      [
        summary.rollouts,
        summary.kept,
        summary.accuracy,
        summary.tool_calls,
        summary.tool_error_ratio,
        summary.tool_fleet_faults
      ],
      [8, 4, 0.5, 8, 0, 0]
    )
    assert.deepEqual(summary.pass_at_k, { 1: 0.5, 4: 0.5 })
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrajectoryRecord)
    assert.equal(records.length, 4)
    for (const r of records) {
      assert.equal(r.loss_mask.length, r.response_ids.length)
      assert.deepEqual(r.tool_statuses, { ok: 1 })
      assert.equal(r.answer, '5050')
      assert.equal(r.reward, r.reference === '5050' ? 1 : 0)
    }
  } finally {
    await server.close()
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("the README's laptop rollout: --engine scripted over the example dataset, through a real fleet", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-laptop-'))
  const fleet = await startFleet(['trainer-e2e-laptop'])
  const said: string[] = []
  try {
    const dataset = fileURLToPath(new URL('../packages/trainer/examples/arithmetic.jsonl', import.meta.url))
    const summary = await rolloutCommand(
      [
        '--engine',
        'scripted',
        '--dataset',
        dataset,
        '--fleet',
        fleet.url,
        '--out',
        join(dir, 'r.jsonl'),
        '--no-progress'
      ],
      { stdout: () => {}, stderr: { write: (t) => said.push(t) }, env: {} }
    )
    assert.ok(summary)
    assert.match(said.join(''), /--engine scripted: a scripted arithmetic model at http:\/\/127\.0\.0\.1:\d+/)
    // 8 problems × 8 rollouts; the model is wrong at seeds ≡ 0 (mod 4) and cannot read "the capital of France";
    // its first code fails at seeds ≡ 1 (mod 5) (11 of the 56 solvable rollouts' seeds), and it fixes it.
    assert.deepEqual(
      [
        summary.prompts,
        summary.rollouts,
        summary.failed,
        summary.accuracy,
        summary.tool_calls,
        summary.tool_fleet_faults
      ],
      [8, 64, 0, 42 / 64, 67, 0]
    )
    assert.equal(summary.tool_error_ratio, 11 / 67)
    assert.deepEqual(summary.stop_reasons, { answer: 64 })
    assert.equal(summary.first_error, null)
  } finally {
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
