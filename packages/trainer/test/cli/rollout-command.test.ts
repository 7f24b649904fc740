import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startFakeFleet } from '@sandfleet/client/testing'
import { type ExecResult } from '@sandfleet/protocol'
import { parseCommandLine } from '@sandfleet/command-line'
import { ROLLOUT_COMMAND, parseDatasetLine, passAtK, rolloutCommand, type TrajectoryRecord } from '@sandfleet/trainer'
import { ScriptedTokenizer, startScriptedEngine } from '@sandfleet/trainer'

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

test('flags not on the command line come from SANDFLEET_<FLAG>; the command line wins', () => {
  const { values } = parseCommandLine(ROLLOUT_COMMAND, ['--n', '4'], {
    SANDFLEET_MAX_TURNS: '3',
    SANDFLEET_ENGINE: 'http://a,http://b',
    SANDFLEET_SESSIONS: 'true',
    SANDFLEET_N: '99',
    SANDFLEET_URL: 'http://fleet'
  })
  assert.deepEqual(values, {
    n: 4,
    maxTurns: 3,
    engine: ['http://a', 'http://b'],
    sessions: true,
    fleet: 'http://fleet'
  })
})

test('pass@k is the unbiased estimator; dataset lines take the usual field names', () => {
  assert.equal(passAtK(4, 0, 1), 0)
  assert.equal(passAtK(4, 1, 1), 0.25)
  assert.equal(passAtK(4, 1, 4), 1)
  assert.ok(Math.abs(passAtK(4, 2, 2) - (1 - 1 / 6)) < 1e-12, '1 − C(2,2)/C(4,2)')
  assert.deepEqual(parseDatasetLine('{"question": "1+1?", "ground_truth": 2}', 1, 'be brief'), {
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: '1+1?' }
    ],
    reference: '2'
  })
  assert.throws(() => parseDatasetLine('{"answer": "2"}', 7), /line 7/)
})

test('sandfleet rollout runs a dataset through engine and fleet, writes kept trajectories and a summary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rollout-'))
  // the model: computes with a tool, then answers right when the prompt asks for 2**10, wrong for the other
  const engine = await startScriptedEngine((ctx) => {
    if (ctx.turn === 0)
      return ctx.prompt.includes('2**10')
        ? '<tool_call>{"name":"python","arguments":{"code":"print(2**10)"}}</tool_call>'
        : '<tool_call>{"name":"python","arguments":{"code":"1/0"}}</tool_call>'
    return ctx.prompt.includes('1024') ? '<answer>\\boxed{1024}</answer>' : '<answer>\\boxed{0}</answer>'
  })
  const fleet = await startFakeFleet((req) =>
    req.code.includes('1/0')
      ? {
          ...ok(''),
          status: 'error',
          exit_code: 1,
          stderr: 'ZeroDivisionError: division by zero',
          error: { type: 'ZeroDivisionError', message: 'division by zero' }
        }
      : ok('1024\n')
  )
  const dataset = join(dir, 'data.jsonl')
  writeFileSync(
    dataset,
    '{"prompt": "What is 2**10?", "answer": "1024"}\n\n{"prompt": "What is 7/0?", "answer": "undefined"}\n'
  )
  const out = join(dir, 'out.jsonl')
  const err: string[] = []
  const stdout: string[] = []
  try {
    const summary = await rolloutCommand(
      [
        '--engine',
        engine.url,
        '--model',
        'm',
        '--dataset',
        dataset,
        '--fleet',
        fleet.url,
        '--n',
        '4',
        '--out',
        out,
        '--seed',
        '1'
      ],
      {
        stdout: (t) => stdout.push(t),
        stderr: {
          write: (t) => {
            err.push(t)
          },
          isTTY: false
        },
        env: { SANDFLEET_KEEP: '2', SANDFLEET_N: '99' }
      }
    )
    assert.ok(summary)
    assert.equal(summary.prompts, 2)
    assert.equal(summary.rollouts, 8)
    assert.equal(summary.kept, 4)
    assert.equal(summary.accuracy, 0.5)
    assert.deepEqual(summary.pass_at_k, { 1: 0.5, 4: 0.5 })
    assert.equal(summary.tool_calls, 8)
    assert.equal(summary.tool_error_ratio, 0.5, 'four 1/0 calls of eight, counted by status')
    assert.equal(summary.turns_mean, 2)
    assert.deepEqual(summary.stop_reasons, { answer: 8 })
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrajectoryRecord)
    assert.equal(lines.length, 4, 'the kept rollouts')
    for (const r of lines) {
      assert.equal(r.loss_mask.length, r.response_ids.length)
      assert.equal(r.rollout_logprobs.length, r.response_ids.length)
      assert.equal(r.kept, true)
      assert.equal(r.num_turns, 2)
      assert.equal(r.reward, r.group === 0 ? 1 : 0)
      assert.equal(r.advantage, 0, 'a group with equal rewards has no advantage')
      assert.deepEqual(r.tool_statuses, r.group === 0 ? { ok: 1 } : { error: 1 })
      assert.equal(ScriptedTokenizer.decode(r.prompt_ids).includes(r.group === 0 ? '2**10' : '7/0'), true)
    }
    const file = JSON.parse(readFileSync(join(dir, 'out.summary.json'), 'utf8')) as { accuracy: number; n: number }
    assert.equal(file.accuracy, 0.5)
    assert.equal(file.n, 4)
    assert.match(err.join(''), /rollout \[#+\] 8\/8 acc 0\.500 failed 0/)
    assert.equal(JSON.parse(stdout.join('')).rollouts, 8)
    const seeds = new Set(engine.log.filter((e) => e.path === '/v1/completions').map((e) => e.body?.seed))
    assert.equal(seeds.size, 8, 'each rollout samples with its own seed (derived from --seed 1), kept across its turns')
  } finally {
    await engine.close()
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("sandfleet rollout fails with the engine's error when every rollout fails; bad flags are named", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rollout-'))
  const dataset = join(dir, 'data.jsonl')
  writeFileSync(dataset, '{"prompt": "q", "answer": "1"}\n')
  const io = { stdout: () => {}, stderr: { write: () => {} }, env: {} }
  try {
    await assert.rejects(
      rolloutCommand(
        [
          '--engine',
          'http://127.0.0.1:1',
          '--model',
          'm',
          '--dataset',
          dataset,
          '--out',
          join(dir, 'o.jsonl'),
          '--n',
          '2',
          '--no-progress'
        ],
        io
      ),
      /every rollout failed; first error: .*127\.0\.0\.1:1/
    )
    await assert.rejects(
      rolloutCommand(['--model', 'm', '--dataset', dataset], io),
      /--engine, --model and --dataset are required/
    )
    await assert.rejects(
      rolloutCommand(['--engine', 'http://x', '--model', 'm', '--dataset', dataset, '--format', 'xml'], io),
      /--format: must be one of hermes, markdown, code/
    )
    await assert.rejects(
      rolloutCommand(['--engine', 'http://x', '--model', 'm', '--dataset', dataset, '--engine-api', 'tgi'], io),
      /--engine-api: must be one of completions, sglang/
    )
    for (const [flag, value, message] of [
      ['--roc-mode', 'random', /--roc-mode: must be one of sample, deterministic, got "random"/],
      ['--roc-error-count', 'text', /--roc-error-count: must be one of status, substring, got "text"/],
      ['--schedule', 'fastest', /--schedule: must be one of least_requests, kv, round_robin/],
      ['--advantage-std', 'sample', /--advantage-std: must be one of population, unbiased/],
      ['--fleet-faults', 'ignore', /--fleet-faults: must be one of rerun, drop/],
      ['--advantage', 'ppo', /--advantage: must be one of grpo, dr_grpo/],
      ['--tool-response-truncate-side', 'start', /--tool-response-truncate-side: must be one of left, middle, right/],
      ['--n', 'many', /--n: needs a whole number, got "many"/],
      ['--preset', 'r1', /--preset: must be one of rstar2/],
      ['--max-parallel-calls', '0', /--max-parallel-calls: must be ≥ 1/]
    ] as const) {
      await assert.rejects(
        rolloutCommand(['--engine', 'http://x', '--model', 'm', '--dataset', dataset, flag, value], io),
        message
      )
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('sandfleet rollout --schedule kv over two engines spreads turns by free KV', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rollout-'))
  const script = (ctx: { turn: number }): string =>
    ctx.turn === 0
      ? '<tool_call>{"name":"python","arguments":{"code":"print(1)"}}</tool_call>'
      : '<answer>\\boxed{1}</answer>'
  const a = await startScriptedEngine(script)
  const b = await startScriptedEngine(script)
  const fleet = await startFakeFleet(() => ok('1\n'))
  const dataset = join(dir, 'data.jsonl')
  writeFileSync(dataset, '{"prompt": "one", "answer": "1"}\n')
  try {
    const summary = await rolloutCommand(
      [
        '--engine',
        `${a.url},${b.url}`,
        '--model',
        'm',
        '--dataset',
        dataset,
        '--fleet',
        fleet.url,
        '--n',
        '6',
        '--out',
        join(dir, 'o.jsonl'),
        '--schedule',
        'kv',
        '--kv-capacity',
        '100000',
        '--usage-poll-ms',
        '50',
        '--no-progress'
      ],
      { stdout: () => {}, stderr: { write: () => {} }, env: {} }
    )
    assert.equal(summary?.accuracy, 1)
    const served = [a, b].map((s) => s.log.filter((e) => e.path === '/v1/completions').length)
    assert.equal(served[0] + served[1], 12, 'two turns for each of six rollouts')
    assert.ok(served[0] > 0 && served[1] > 0, `both engines generated (${served.join(', ')})`)
  } finally {
    await a.close()
    await b.close()
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('sandfleet rollout --roc-mode deterministic --roc-error-count substring: the released selection picks the kept rollouts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rollout-'))
  // rollouts 0–3 answer right, 4–7 wrong; the tool prints "error-free" for 0 and 1 (a clean run)
  let k = 0
  const engine = await startScriptedEngine((ctx) => {
    if (ctx.turn > 0) return ctx.prompt.includes(' R\n') ? '<answer>\\boxed{1}</answer>' : '<answer>\\boxed{2}</answer>'
    const i = k++
    return `<tool_call>{"name":"python","arguments":{"code":"print('${i < 2 ? 'error-free' : 'fine'} ${i < 4 ? 'R' : 'W'}')"}}</tool_call>`
  })
  const fleet = await startFakeFleet((req) => ok(`${/print\('(.*)'\)/.exec(req.code)?.[1] ?? ''}\n`))
  const dataset = join(dir, 'data.jsonl')
  writeFileSync(dataset, '{"prompt": "q", "answer": "1"}\n')
  const io = { stdout: () => {}, stderr: { write: () => {} }, env: {} }
  const out = join(dir, 'o.jsonl')
  const args = [
    '--engine',
    engine.url,
    '--model',
    'm',
    '--dataset',
    dataset,
    '--fleet',
    fleet.url,
    '--n',
    '8',
    '--keep',
    '4',
    '--concurrency',
    '1',
    '--roc-mode',
    'deterministic',
    '--out',
    out,
    '--no-progress'
  ]
  const kept = (): number[] =>
    readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as TrajectoryRecord).sample)
      .sort((a, b) => a - b)
  try {
    await rolloutCommand([...args, '--roc-error-count', 'substring'], io)
    assert.deepEqual(
      kept(),
      [2, 3, 4, 5],
      'the "error" printed by 0 and 1 counts against them; negatives in batch order'
    )
    k = 0
    await rolloutCommand(args, io)
    assert.deepEqual(kept(), [0, 1, 4, 5], 'by status (the default) every call was ok')
    await assert.rejects(rolloutCommand([...args, '--keep', '3'], io), /more than keep 3/)
  } finally {
    await engine.close()
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('sandfleet rollout judges code problems (APPS form) through the fleet; --partial-reward scores tests passed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-rollout-code-'))
  // the model writes a sum, right for the first problem, right on one test of two for the second
  const engine = await startScriptedEngine(() => '```python\na, b = map(int, input().split())\nprint(a + b)\n```')
  const fleet = await startFakeFleet()
  const dataset = join(dir, 'code.jsonl')
  const problem = (question: string, pairs: Array<[string, string]>): string =>
    JSON.stringify({
      question,
      input_output: JSON.stringify({ inputs: pairs.map((p) => p[0]), outputs: pairs.map((p) => p[1]) })
    })
  writeFileSync(
    dataset,
    `${problem('Add two numbers.', [
      ['1 2\n', '3\n'],
      ['5 6\n', '11\n']
    ])}\n${problem('Multiply two numbers.', [
      ['2 2\n', '4\n'],
      ['2 3\n', '6\n']
    ])}\n`
  )
  const run = async (...flags: string[]) =>
    await rolloutCommand(
      [
        '--engine',
        engine.url,
        '--model',
        'm',
        '--dataset',
        dataset,
        '--fleet',
        fleet.url,
        '--n',
        '2',
        '--out',
        join(dir, 'o.jsonl'),
        '--no-progress',
        ...flags
      ],
      { stdout: () => {}, stderr: { write: () => {}, isTTY: false }, env: {} }
    )
  try {
    const all = await run()
    assert.equal(all?.accuracy, 0.5, 'the first problem passes, the second does not')
    assert.deepEqual(all?.pass_at_k, { 1: 0.5, 2: 0.5 })
    const partial = await run('--partial-reward')
    assert.equal(partial?.accuracy, 0.75, 'one test of two of the second problem')
    assert.equal(fleet.log.filter((e) => e.path === '/v1/judge').length, 8)
  } finally {
    await engine.close()
    await fleet.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
