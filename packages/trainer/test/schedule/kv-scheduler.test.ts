import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SandfleetClient } from '@sandfleet/client'
import { startFakeFleet } from '@sandfleet/client/testing'
import {
  CompletionsEngine,
  EnginePicker,
  KvScheduler,
  readKvMetrics,
  RetryingEngine,
  runEpisode,
  TrainerError
} from '@sandfleet/trainer'
import { startScriptedEngine, type ScriptedEngine } from '@sandfleet/trainer'

const VLLM_METRICS = [
  '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
  '# TYPE vllm:cache_config_info gauge',
  'vllm:cache_config_info{block_size="16",cache_dtype="auto",num_gpu_blocks="64",num_cpu_blocks="0"} 1.0',
  'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25',
  'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
  'vllm:num_requests_waiting{engine="0",model_name="m"} 1.0'
].join('\n')

test('KV capacity and usage are read from vLLM and SGLang metrics', () => {
  assert.deepEqual(readKvMetrics(VLLM_METRICS), { capacityTokens: 1024, usage: 0.25, running: 3, waiting: 1 })
  assert.deepEqual(
    readKvMetrics(
      'sglang:max_total_num_tokens{model_name="m"} 500000\nsglang:token_usage{model_name="m"} 0.5\nsglang:num_running_reqs{model_name="m"} 7\nsglang:num_queue_reqs{model_name="m"} 0'
    ),
    { capacityTokens: 500000, usage: 0.5, running: 7, waiting: 0 }
  )
  assert.deepEqual(readKvMetrics('vllm:gpu_cache_usage_perc 0.1'), { usage: 0.1 })
})

test('the kv policy picks the engine with the most free KV, waits when none has room, never strands a huge request', () => {
  const kv = new EnginePicker('kv')
  const slots = [
    { capacityTokens: 1000, reservedTokens: 600, inFlight: 2 },
    { capacityTokens: 1000, reservedTokens: 200, inFlight: 5 },
    { capacityTokens: 2000, reservedTokens: 1500, inFlight: 1 }
  ]
  assert.equal(kv.pick(slots, 300), 1, '800 free beats 400 and 500, whatever the request counts')
  assert.equal(kv.pick(slots, 900), undefined, 'no engine has 900 free: wait')
  assert.equal(
    kv.pick(
      [
        { capacityTokens: 100, reservedTokens: 0, inFlight: 0 },
        { capacityTokens: 200, reservedTokens: 0, inFlight: 0 }
      ],
      5000
    ),
    1,
    'larger than every engine: the idle one with the most capacity'
  )
  const rr = new EnginePicker('round_robin')
  assert.deepEqual([rr.pick(slots, 1), rr.pick(slots, 1), rr.pick(slots, 1), rr.pick(slots, 1)], [0, 1, 2, 0])
  assert.equal(new EnginePicker('least_requests').pick(slots, 1), 2)
})

test('the scheduler never reserves more than an engine holds: generations wait for room, then run', async () => {
  const servers: ScriptedEngine[] = []
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  for (let i = 0; i < 2; i++)
    servers.push(
      await startScriptedEngine(
        async () => {
          await gate
          return 'ok'
        },
        { metrics: () => VLLM_METRICS }
      )
    )
  const sched = await KvScheduler.create({
    policy: 'kv',
    engines: servers.map((s) => new CompletionsEngine({ url: s.url, model: 'm' }))
  })
  try {
    assert.deepEqual(
      sched.stats().engines.map((e) => e.capacityTokens),
      [1024, 1024],
      'capacity from num_gpu_blocks × block_size'
    )
    // each generation reserves 100 + 300 = 400 tokens: two fit in 1024, a third does not
    const gens = Array.from(
      { length: 6 },
      async () => await sched.generate({ promptIds: Array.from({ length: 100 }, () => 105), maxTokens: 300 })
    )
    for (
      let i = 0;
      i < 500 && !servers.every((x) => x.log.filter((e) => e.path === '/v1/completions').length === 2);
      i++
    )
      await new Promise((resolve) => setTimeout(resolve, 10))
    const s = sched.stats()
    assert.deepEqual(
      s.engines.map((e) => e.inFlight),
      [2, 2]
    )
    assert.deepEqual(
      s.engines.map((e) => e.reservedTokens),
      [800, 800]
    )
    assert.equal(s.waiting, 2)
    release()
    const out = await Promise.all(gens)
    assert.deepEqual(
      out.map((g) => g.text),
      Array.from({ length: 6 }, () => 'ok')
    )
    assert.deepEqual(
      servers.map((x) => x.maxInFlight()),
      [2, 2],
      'no engine ever had more than fits'
    )
    assert.deepEqual(
      sched.stats().engines.map((e) => [e.inFlight, e.reservedTokens, e.generations]),
      [
        [0, 0, 3],
        [0, 0, 3]
      ]
    )
  } finally {
    await sched.close()
    for (const x of servers) await x.close()
  }
})

test('reported usage and a smaller reservation change what fits', async () => {
  let usage = 0.5
  const server = await startScriptedEngine(() => 'ok', { metrics: () => VLLM_METRICS.replace('0.25', String(usage)) })
  const sched = await KvScheduler.create({
    policy: 'kv',
    engines: [new CompletionsEngine({ url: server.url, model: 'm' })],
    reserveNewTokens: 100
  })
  try {
    await sched.readUsage()
    assert.equal(sched.stats().engines[0].usedTokens, 512, 'half of 1024 reported in use')
    assert.equal(sched.stats().engines[0].reservedTokens, 0)
    const gen = sched.generate({ promptIds: Array.from({ length: 300 }, () => 105), maxTokens: 2000 })
    assert.equal(sched.stats().engines[0].reservedTokens, 400, '300 context + 100 reserved of the 2000 allowed')
    await gen
    usage = 0.9
    await sched.readUsage()
    const ac = new AbortController()
    const waiting = sched.generate({
      promptIds: Array.from({ length: 300 }, () => 105),
      maxTokens: 10,
      signal: ac.signal
    })
    assert.equal(sched.stats().waiting, 1, '922 in use: 310 more do not fit')
    ac.abort()
    await assert.rejects(waiting)
  } finally {
    await sched.close()
    await server.close()
  }
})

test("a trajectory's next turn goes back to the engine of its last turn when that one has room", async () => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const script = async (ctx: { prompt: string }): Promise<string> => {
    if (ctx.prompt.includes('HOLD')) await gate
    return 'ok'
  }
  const a = await startScriptedEngine(script)
  const b = await startScriptedEngine(script)
  const sched = await KvScheduler.create({
    policy: 'kv',
    engines: [new CompletionsEngine({ url: a.url, model: 'm' }), new CompletionsEngine({ url: b.url, model: 'm' })],
    capacityTokens: 1000
  })
  const ids = (text: string): number[] => Array.from(text, (c) => 100 + c.charCodeAt(0))
  try {
    await sched.generate({ promptIds: ids('turn one'), maxTokens: 100, affinity: 'traj-1' })
    assert.deepEqual(
      sched.stats().engines.map((e) => e.generations),
      [1, 0]
    )
    const held = sched.generate({ promptIds: ids('HOLD'), maxTokens: 300 }) // engine 0 (tie, lowest index) … now 304 reserved there
    const held2 = sched.generate({ promptIds: ids('HOLD'), maxTokens: 100 }) // the freer engine 1
    assert.deepEqual(
      sched.stats().engines.map((e) => e.reservedTokens),
      [304, 104]
    )
    await sched.generate({ promptIds: ids('turn one, turn two'), maxTokens: 100, affinity: 'traj-1' })
    assert.deepEqual(
      sched.stats().engines.map((e) => e.generations),
      [3, 1],
      'back on engine 0 although engine 1 has more free'
    )
    await sched.generate({ promptIds: ids('another'), maxTokens: 100, affinity: 'traj-2' })
    assert.deepEqual(
      sched.stats().engines.map((e) => e.generations),
      [3, 2],
      'a new trajectory goes to the freest engine'
    )
    await sched.generate({ promptIds: ids('turn one, turn two, turn three'), maxTokens: 690, affinity: 'traj-1' })
    assert.deepEqual(
      sched.stats().engines.map((e) => e.generations),
      [3, 3],
      'no room on engine 0 (304 + 720 > 1000): the other one'
    )
    release()
    await Promise.all([held, held2])
  } finally {
    await sched.close()
    await a.close()
    await b.close()
  }
})

test('an engine that fails with a connection error cools down: retries go to the engine that is up', async () => {
  const up = await startScriptedEngine(() => 'ok')
  const sched = await KvScheduler.create({
    engines: [
      new CompletionsEngine({ url: 'http://127.0.0.1:1', model: 'm' }),
      new CompletionsEngine({ url: up.url, model: 'm' })
    ],
    capacityTokens: 1000,
    cooldownMs: 60_000
  })
  const engine = new RetryingEngine(sched, { baseDelayMs: 1, maxDelayMs: 2 })
  try {
    assert.equal(
      (await engine.generate({ promptIds: [1, 2, 3], maxTokens: 10 })).text,
      'ok',
      'the first try picked the dead engine (a tie, lowest index); the retry the live one'
    )
    const gens = await Promise.all(
      [1, 2, 3].map(async () => await engine.generate({ promptIds: [1, 2, 3], maxTokens: 10 }))
    )
    assert.deepEqual(
      gens.map((g) => g.text),
      ['ok', 'ok', 'ok']
    )
    const s = sched.stats().engines
    assert.equal(s[0].available, false, 'the dead engine is cooling down')
    assert.equal(s[0].generations, 1, 'it was tried once, then left out')
    assert.equal(s[1].generations, 4)
  } finally {
    await engine.close()
    await up.close()
  }
})

test('a waiting generation can be aborted; under kv an engine without metrics needs a capacity', async () => {
  const server = await startScriptedEngine(() => ({ text: 'slow', delayMs: 300 }))
  await assert.rejects(
    KvScheduler.create({
      policy: 'kv',
      engines: [
        {
          url: 'x',
          generate: async () => {
            throw new Error('x')
          },
          tokenize: async () => [],
          applyChatTemplate: async () => [],
          close: async () => {}
        }
      ]
    }),
    (e: TrainerError) => e.code === 'SF_ERR_TRAINER_BAD_INPUT'
  )
  const sched = await KvScheduler.create({
    policy: 'kv',
    engines: [new CompletionsEngine({ url: server.url, model: 'm' })],
    capacityTokens: 100
  })
  try {
    const first = sched.generate({ promptIds: [1], maxTokens: 80 })
    const ac = new AbortController()
    const second = sched.generate({ promptIds: [1], maxTokens: 80, signal: ac.signal })
    ac.abort()
    await assert.rejects(second, (e: TrainerError) => e.code === 'SF_ERR_TRAINER_ABORTED')
    assert.equal((await first).text, 'slow')
    assert.equal(sched.stats().waiting, 0)
  } finally {
    await sched.close()
    await server.close()
  }
})

test('episodes run through the scheduler over two engines, turns spread over both', async () => {
  const script = (ctx: { turn: number }): string =>
    ctx.turn === 0
      ? '<tool_call>{"name":"python","arguments":{"code":"print(1)"}}</tool_call>'
      : '<answer>\\boxed{1}</answer>'
  const a = await startScriptedEngine(script)
  const b = await startScriptedEngine(script)
  const fleet = await startFakeFleet(() => ({
    status: 'ok',
    stdout: '1\n',
    stderr: '',
    exit_code: 0,
    duration_ms: 1,
    queue_ms: 0,
    truncated: { stdout: false, stderr: false },
    error: null,
    files: {},
    runner: 'f',
    sandbox: 'f'
  }))
  const client = new SandfleetClient({ url: fleet.url })
  const sched = await KvScheduler.create({
    engines: [new CompletionsEngine({ url: a.url, model: 'm' }), new CompletionsEngine({ url: b.url, model: 'm' })],
    capacityTokens: 20_000
  })
  try {
    const ts = await Promise.all(
      Array.from(
        { length: 8 },
        async () =>
          await runEpisode({
            engine: sched,
            fleet: client,
            prompt: [{ role: 'user', content: 'q' }],
            maxResponseTokens: 4000
          })
      )
    )
    assert.deepEqual(
      ts.map((t) => t.stopReason),
      Array.from({ length: 8 }, () => 'answer')
    )
    const gens = sched.stats().engines.map((e) => e.generations)
    assert.equal(gens[0] + gens[1], 16)
    assert.ok(gens[0] > 0 && gens[1] > 0, `both engines served turns (${gens.join(', ')})`)
  } finally {
    await sched.close()
    await client.close()
    await fleet.close()
    await a.close()
    await b.close()
  }
})

test('the default policy is least requests: no metrics needed, each generation to the engine with the fewest in flight', async () => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const script = async (ctx: { prompt: string }): Promise<string> => {
    if (ctx.prompt.includes('HOLD')) await gate
    return 'ok'
  }
  const a = await startScriptedEngine(script)
  const b = await startScriptedEngine(script)
  // the scripted servers' metrics name no KV capacity: under kv, create() would fail
  const sched = await KvScheduler.create({
    engines: [new CompletionsEngine({ url: a.url, model: 'm' }), new CompletionsEngine({ url: b.url, model: 'm' })]
  })
  const ids = (text: string): number[] => Array.from(text, (c) => 100 + c.charCodeAt(0))
  try {
    assert.match(sched.url, /^scheduler\(least_requests: /)
    const held = [
      sched.generate({ promptIds: ids('HOLD'), maxTokens: 10 }),
      sched.generate({ promptIds: ids('HOLD'), maxTokens: 10 }),
      sched.generate({ promptIds: ids('HOLD'), maxTokens: 10 })
    ]
    assert.deepEqual(
      sched.stats().engines.map((e) => e.inFlight),
      [2, 1],
      'ties to the lowest index, then the emptier engine'
    )
    await sched.generate({ promptIds: ids('x'), maxTokens: 5000, affinity: 't' })
    assert.deepEqual(
      sched.stats().engines.map((e) => e.generations),
      [2, 2],
      'the one with fewer in flight, however large the request'
    )
    release()
    await Promise.all(held)
  } finally {
    await sched.close()
    await a.close()
    await b.close()
  }
})
