import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { pythonJudge, startFakeFleet } from '@sandfleet/client/testing'
import { failedJudgeResult } from '@sandfleet/protocol'
import { CompletionsEngine, runDataset, type TrajectoryRecord } from '@sandfleet/trainer'
import { startScriptedEngine } from '@sandfleet/trainer'

test('runDataset: DAPO overlong penalty on the reward, equal-reward groups dropped, RoC draws reproducible per seed', async () => {
  let a = 0
  const server = await startScriptedEngine((ctx) =>
    ctx.prompt.includes('item A') ? (a++ % 2 === 0 ? '\\boxed{1}' : '\\boxed{9}') : `${'padding '.repeat(4)}\\boxed{2}`
  )
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  const items = [
    { messages: [{ role: 'user' as const, content: 'item A' }], reference: '1' },
    { messages: [{ role: 'user' as const, content: 'item B' }], reference: '2' }
  ]
  try {
    const records: TrajectoryRecord[] = []
    const summary = await runDataset({
      items,
      n: 4,
      keep: 4,
      concurrency: 1,
      episode: { engine, fleet: client },
      overlong: { maxLength: 60, cacheLength: 20 },
      dropEqualRewardGroups: true,
      onRecord: (r) => {
        records.push(r)
      }
    })
    assert.equal(summary.accuracy, 0.75, 'correctness before the penalty: 2 of 4, then 4 of 4')
    assert.equal(summary.groups_dropped, 1, 'item B: four equal rewards')
    assert.equal(summary.kept, 4)
    assert.deepEqual(
      records.map((r) => r.group),
      [0, 0, 0, 0]
    )
    assert.deepEqual(records.map((r) => r.reward).sort(), [0, 0, 1, 1])
    assert.deepEqual(records.map((r) => Math.round((r.advantage ?? NaN) * 1e4) / 1e4).sort(), [-1, -1, 1, 1])
    const all: TrajectoryRecord[] = []
    await runDataset({
      items: [items[1]],
      n: 2,
      keep: 2,
      episode: { engine, fleet: client },
      overlong: { maxLength: 60, cacheLength: 20 },
      writeAll: true,
      onRecord: (r) => {
        all.push(r)
      }
    })
    assert.equal(all.length, 2, 'every rollout written')
    for (const r of all)
      assert.equal(r.reward, 1 + (40 - r.response_length) / 20, `penalised for ${r.response_length} tokens past 40`)

    const kept = async (): Promise<number[]> => {
      const out: number[] = []
      await runDataset({
        items,
        n: 4,
        keep: 2,
        seed: 7,
        concurrency: 8,
        episode: { engine, fleet: client },
        onRecord: (r) => {
          out.push(r.group * 10 + r.sample)
        }
      })
      return out.sort((x, y) => x - y)
    }
    assert.deepEqual(await kept(), await kept())
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test('runDataset: an episode hit by a fleet fault is re-run (default) or dropped, never trained on as a negative', async () => {
  // the model calls a tool, then answers right only when it saw the tool's output
  const server = await startScriptedEngine((ctx) =>
    ctx.turn === 0
      ? '<tool_call>{"name":"python","arguments":{"code":"print(7)"}}</tool_call>'
      : ctx.prompt.includes('<tool_response>\n7')
        ? '<answer>\\boxed{7}</answer>'
        : '<answer>\\boxed{0}</answer>'
  )
  let calls = 0
  let faultAt = [0, 2, 4] // calls answered with a fleet status, one of each
  const faults = ['infra_error', 'overloaded', 'queue_timeout'] as const
  const fleet = await startFakeFleet(() => {
    const k = faultAt.indexOf(calls++)
    const status = k >= 0 ? faults[k] : 'ok'
    return {
      status,
      stdout: status === 'ok' ? '7\n' : '',
      stderr: '',
      exit_code: status === 'ok' ? 0 : null,
      duration_ms: 1,
      queue_ms: 0,
      truncated: { stdout: false, stderr: false },
      error: status === 'ok' ? null : { type: 'SF_ERR_TEST', message: 'the runner went away' },
      files: {},
      runner: 'fake',
      sandbox: 'fake-0'
    }
  })
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url, retry: { maxAttempts: 1 } })
  const items = [{ messages: [{ role: 'user' as const, content: 'seven' }], reference: '7' }]
  try {
    const records: TrajectoryRecord[] = []
    const summary = await runDataset({
      items,
      n: 4,
      keep: 4,
      concurrency: 1,
      episode: { engine, fleet: client },
      onRecord: (r) => {
        records.push(r)
      }
    })
    assert.equal(records.length, 4)
    assert.deepEqual(
      records.map((r) => r.reward),
      [1, 1, 1, 1],
      'no faulted episode scored 0'
    )
    assert.ok(
      records.every(
        (r) => Object.keys(r.tool_statuses).length > 0 && Object.keys(r.tool_statuses).every((s) => s === 'ok')
      ),
      'every episode called the tool, and every call was ok'
    )
    assert.equal(summary.fleet_fault_reruns, 3)
    assert.equal(summary.fleet_fault_dropped, 0)
    assert.equal(summary.accuracy, 1)

    calls = 0
    faultAt = [0, 1, 2]
    const kept: TrajectoryRecord[] = []
    const dropped = await runDataset({
      items,
      n: 4,
      keep: 4,
      concurrency: 1,
      fleetFaults: 'drop',
      episode: { engine, fleet: client },
      onRecord: (r) => {
        kept.push(r)
      }
    })
    assert.equal(kept.length, 1, 'three episodes met a fault and were dropped; the fourth is trained on')
    assert.equal(dropped.fleet_fault_dropped, 3)
    assert.equal(dropped.rollouts, 1)

    calls = 0
    faultAt = [0, 1]
    const capped = await runDataset({
      items: [items[0]],
      n: 1,
      keep: 1,
      maxReruns: 1,
      episode: { engine, fleet: client },
      onRecord: () => {}
    })
    assert.equal(capped.fleet_fault_reruns, 1)
    assert.equal(capped.fleet_fault_dropped, 1, 'after its re-runs a faulted episode is dropped, not scored')
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test('runDataset: all-equal groups are rejected before RoC downsamples; RoC mode, guards and advantage std reach it', async () => {
  // item A: 1 correct of 8; item B: 8 correct of 8
  const counts: Record<string, number> = {}
  const server = await startScriptedEngine((ctx) => {
    const key = ctx.prompt.includes('item A') ? 'A' : 'B'
    const k = (counts[key] = (counts[key] ?? 0) + 1)
    return key === 'B' || k === 3 ? '<answer>\\boxed{1}</answer>' : '<answer>\\boxed{2}</answer>'
  })
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  const items = [
    { messages: [{ role: 'user' as const, content: 'item A' }], reference: '1' },
    { messages: [{ role: 'user' as const, content: 'item B' }], reference: '1' }
  ]
  try {
    const records: TrajectoryRecord[] = []
    const summary = await runDataset({
      items,
      n: 8,
      keep: 4,
      concurrency: 1,
      rocMode: 'deterministic',
      advantageStd: 'unbiased',
      dropEqualRewardGroups: true,
      writeAll: true,
      episode: { engine, fleet: client },
      onRecord: (r) => {
        records.push(r)
      }
    })
    assert.equal(summary.groups_dropped, 1)
    assert.equal(records.filter((r) => r.group === 1 && r.kept).length, 0, 'item B: no rollout kept')
    const a = records.filter((r) => r.group === 0 && r.kept)
    assert.equal(a.length, 4)
    assert.deepEqual(
      a.map((r) => r.sample),
      [0, 1, 2, 3],
      'deterministic: equal penalties, lowest index first; the one positive guarded'
    )
    // rewards 0,0,1,0: mean 0.25, unbiased std 0.5
    assert.deepEqual(
      a.map((r) => Math.round((r.advantage ?? NaN) * 1e4) / 1e4),
      [-0.5, -0.5, 1.5, -0.5]
    )
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test('runDataset: the error-count rule reaches RoC; deterministic guards larger than keep are refused before any rollout', async () => {
  // rollouts 0–3 answer right, 4–7 wrong; 0 and 1 print "error-free" from a clean run
  let k = 0
  const server = await startScriptedEngine((ctx) => {
    if (ctx.turn > 0) return ctx.prompt.includes(' R\n') ? '<answer>\\boxed{1}</answer>' : '<answer>\\boxed{2}</answer>'
    const i = k++
    const printed = `${i < 2 ? 'error-free' : 'fine'} ${i < 4 ? 'R' : 'W'}`
    return `<tool_call>${JSON.stringify({ name: 'python', arguments: { code: `print(${JSON.stringify(printed)})` } })}</tool_call>`
  })
  const fleet = await startFakeFleet()
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url })
  const items = [{ messages: [{ role: 'user' as const, content: 'q' }], reference: '1' }]
  const keptSamples = async (rocErrorCount: 'status' | 'substring'): Promise<number[]> => {
    k = 0
    const records: TrajectoryRecord[] = []
    await runDataset({
      items,
      n: 8,
      keep: 4,
      concurrency: 1,
      rocMode: 'deterministic',
      rocErrorCount,
      episode: { engine, fleet: client },
      onRecord: (r) => {
        records.push(r)
      }
    })
    return records.map((r) => r.sample).sort((a, b) => a - b)
  }
  try {
    // 4 + 4 → 2 + 2; negatives 4, 5 (batch order); positives all at p_format 0 (one span, one answer):
    // by status every p_err is 0, so 0, 1; by substring 0 and 1 have p_err 1, so 2, 3
    assert.deepEqual(await keptSamples('status'), [0, 1, 4, 5])
    assert.deepEqual(await keptSamples('substring'), [2, 3, 4, 5])
    k = 0
    await assert.rejects(
      runDataset({
        items,
        n: 8,
        keep: 3,
        rocMode: 'deterministic',
        episode: { engine, fleet: client },
        onRecord: () => {}
      }),
      /more than keep 3/
    )
    assert.equal(k, 0, 'no rollout ran')
  } finally {
    await client.close()
    await engine.close()
    await fleet.close()
    await server.close()
  }
})

test('runDataset judges code problems through the fleet: 1 for all tests passed, a judge fault asked again or left out', async () => {
  // the model: a right program for "add", a wrong one for "mul", a program the fleet never manages to judge for "flaky"
  const server = await startScriptedEngine((ctx) =>
    ctx.prompt.includes('add')
      ? 'Here:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```'
      : ctx.prompt.includes('flaky')
        ? '```python\n# flaky\nprint(0)\n```'
        : '```python\na, b = map(int, input().split())\nprint(a + b)\n```'
  )
  let faults = 0
  const python = pythonJudge(async (code, stdin) => {
    const [a, b] = stdin.split(' ').map(Number)
    return {
      status: 'ok',
      stdout: `${code.includes('a + b') ? (a ?? 0) + (b ?? 0) : 0}\n`,
      stderr: '',
      exit_code: 0,
      duration_ms: 1,
      queue_ms: 0,
      truncated: { stdout: false, stderr: false },
      error: null,
      files: {},
      runner: 'fake',
      sandbox: 'f'
    }
  })
  const fleet = await startFakeFleet(undefined, {
    judge: async (req, ctx) => {
      if (req.code.includes('# flaky')) {
        faults++
        return failedJudgeResult('infra_error', 'python', 'SF_ERR_RUNNER_SANDBOX_FAILED', 'the sandbox died')
      }
      return await python(req, ctx)
    }
  })
  const engine = new CompletionsEngine({ url: server.url, model: 'm' })
  const client = new SandfleetClient({ url: fleet.url, retry: { maxAttempts: 1 } })
  const io = (pairs: Array<[string, string]>) => ({
    input_output: { inputs: pairs.map((p) => p[0]), outputs: pairs.map((p) => p[1]) }
  })
  const items = [
    {
      messages: [{ role: 'user' as const, content: 'add' }],
      reference: null,
      tests: io([
        ['1 2', '3'],
        ['2 2', '4']
      ])
    },
    {
      messages: [{ role: 'user' as const, content: 'mul' }],
      reference: null,
      tests: io([
        ['2 2', '4'],
        ['2 3', '6']
      ])
    },
    { messages: [{ role: 'user' as const, content: 'flaky' }], reference: null, tests: io([['1 1', '2']]) }
  ]
  try {
    const records: TrajectoryRecord[] = []
    const summary = await runDataset({
      items,
      n: 2,
      keep: 2,
      episode: { engine, fleet: client },
      judge: client,
      maxReruns: 1,
      onRecord: (r) => {
        records.push(r)
      }
    })
    assert.deepEqual(
      records.map((r) => [r.group, r.reward]).sort(),
      [
        [0, 1],
        [0, 1],
        [1, 0],
        [1, 0]
      ],
      'the wrong program scores 0; the unjudged ones are not scored at all'
    )
    assert.equal(records[0]?.answer?.includes('print(a + b)'), true, 'the judged program is the answer')
    assert.equal(summary.rollouts, 4)
    assert.equal(summary.fleet_fault_dropped, 2)
    assert.equal(summary.reward_fleet_faults, 4, 'each of the two judged twice')
    assert.equal(faults, 4)
    assert.match(summary.first_unscored ?? '', /^infra_error: /)
    const partial = await runDataset({
      items: [items[1] as (typeof items)[number]],
      n: 1,
      keep: 1,
      episode: { engine, fleet: client },
      judge: client,
      codeReward: { partial: true },
      onRecord: () => {}
    })
    assert.equal(partial.accuracy, 0.5, 'the sum passes the test 2 2 → 4 of two')
    await assert.rejects(
      runDataset({ items, n: 1, keep: 1, episode: { engine, fleet: client }, onRecord: () => {} }),
      /needs the fleet as a judge/
    )
  } finally {
    await client.close()
    await fleet.close()
    await server.close()
  }
})
