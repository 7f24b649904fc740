// A job's end costs the job, not its sandbox: after a `timeout`, `memory` or `killed` answer, the
// same sandbox answers the next job (a probe that must see nothing of the job before it) and the
// pool replaced nothing; on every backend, through a real Runner with one sandbox. Where a backend
// cannot keep its sandbox through an end, the test says which end and checks the reason counted.
// What the runner says of it (its isolation report's "jobs:" line, made from the driver's declared
// life) names exactly the ends each backend is shown here to keep.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { ExecRequest, ExecResult } from '@sandfleet/protocol'
import { Runner } from '../src/runner/runner.ts'
import { runnerConfig, type RunnerConfig, type RunnerConfigInput } from '../src/config.ts'
import type { Driver } from '../src/sandbox/contract.ts'
import { PyodideDriver } from '../src/backends/pyodide/pyodide-driver.ts'
import { silentLogger } from '../src/logger.ts'
import { REPO_EXECUTOR } from './helpers/docker.ts'

/** One end of a job, and the probe the sandbox must answer after it. */
interface End {
  name: string
  request: ExecRequest
  status: ExecResult['status']
}

/** The Python ends, each leaving a file at `place` (an absolute path in a scratch dir, or one in the work dir). */
function pythonEnds(place: string): End[] {
  const leave = `open(${JSON.stringify(place)}, "w").write("x")`
  return [
    {
      name: 'timeout',
      request: { code: `${leave}\nprint("spinning", flush=True)\nwhile True: pass`, timeout_ms: 300 },
      status: 'timeout'
    },
    {
      name: 'memory',
      request: { code: `${leave}\nx = bytearray(400 * 1024 * 1024)`, memory_mb: 64 },
      status: 'memory'
    },
    {
      name: 'killed',
      request: { code: `import os, signal\n${leave}\nos.kill(os.getpid(), signal.SIGKILL)` },
      status: 'killed'
    }
  ]
}

/** The probe: does the file the job before left still exist? */
const probeFor = (place: string): ExecRequest => ({
  code: `import os\nprint(os.path.exists(${JSON.stringify(place)}))`
})
/** In a sandbox's scratch dir (a sandbox's own /tmp). */
const SCRATCH = '/tmp/left-behind'
const PYTHON_ENDS = pythonEnds(SCRATCH)
const PYTHON_PROBE = probeFor(SCRATCH)

/**
 * Pyodide's soft stop, long enough that no starved core misses it: this checks the sandbox kept
 * after a soft stop, and a job that does not take it in time is stopped hard (and retired).
 */
const PATIENT_SOFT_STOP_MS = 30_000

/** `sandfleet_runner_sandbox_replacements_total` of `runner` by reason (its replacement ready). */
async function replacements(runner: Runner): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  const metric = runner.registry.getSingleMetric('sandfleet_runner_sandbox_replacements_total')
  for (const v of (await metric?.get())?.values ?? []) if (v.value > 0) out[String(v.labels.reason)] = v.value
  return out
}

/** The job ends the isolation report of `runner`'s `language` pool says its sandbox takes the next job after. */
function saysKept(runner: Runner, language: string): string[] {
  const line = runner.info().isolation[language]?.properties.find((p) => p.startsWith('jobs: ')) ?? ''
  const ends = /^jobs: after a job that ended (.+?) the \w+ takes the next job; it is replaced when /.exec(line)
  assert.ok(ends !== null, `the report says what its sandbox serves on after: ${line}`)
  return ends[1].split(/, | or /).sort()
}

/**
 * Runs every end on a one-sandbox runner of `config`, each followed by the probe, and checks the
 * same sandbox answered all of them with no replacement (`driverFor`: the driver to use, made
 * from the runner's configuration), and that the runner's report says so.
 */
async function keptThrough(
  input: RunnerConfigInput,
  ends: readonly End[],
  probe: ExecRequest,
  probeStdout: string,
  driverFor?: (config: RunnerConfig) => Driver
): Promise<void> {
  const config = runnerConfig({ poolSize: 1, maxSessions: 0, ...input })
  const runner = new Runner(config, {
    logger: silentLogger,
    ...(driverFor === undefined ? {} : { driver: driverFor(config) })
  })
  try {
    await runner.start()
    const language = probe.language ?? 'python'
    const first = await runner.execute(probe)
    assert.deepEqual([first.status, first.stdout], ['ok', probeStdout], JSON.stringify(first))
    for (const end of ends) {
      const ended = await runner.execute(end.request)
      assert.equal(ended.status, end.status, `${end.name}: ${JSON.stringify(ended).slice(0, 400)}`)
      assert.equal(ended.sandbox, first.sandbox, `${end.name}: answered by the pool's one sandbox`)
      assert.ok(
        typeof ended.cpu_ms === 'number' && ended.cpu_ms >= 0,
        `${end.name}: the job's own CPU is measured (${String(ended.cpu_ms)})`
      )
      const next = await runner.execute(probe)
      assert.deepEqual(
        [next.status, next.stdout, next.sandbox],
        ['ok', probeStdout, first.sandbox],
        `after ${end.name}, the same sandbox answers the probe, which sees nothing of the job`
      )
    }
    const stats = runner.poolStats().find((s) => s.language === language)
    assert.equal(stats?.replacements, 0, 'no sandbox was replaced')
    assert.deepEqual(await replacements(runner), {})
    assert.deepEqual(saysKept(runner, language), [...new Set(ends.map((e) => e.status))].sort())
  } finally {
    await runner.close()
  }
}

test('process backend: a timeout, memory or killed job keeps its sandbox, at fork and at reuse', async () => {
  await keptThrough({ backend: 'process', languages: ['python'] }, PYTHON_ENDS, PYTHON_PROBE, 'False\n')
  const reuse = PYTHON_ENDS.map((e) => ({ ...e, request: { ...e.request, isolation: 'reuse' as const } }))
  await keptThrough(
    { backend: 'process', languages: ['python'] },
    reuse,
    { ...PYTHON_PROBE, isolation: 'reuse' },
    'False\n'
  )
})

test('unsafe backend: a timeout, memory or killed job keeps its executor', async () => {
  // No sandbox: its /tmp is the host's, and only the work dir is emptied.
  await keptThrough(
    { backend: 'unsafe', languages: ['python'] },
    pythonEnds('left-behind'),
    probeFor('left-behind'),
    'False\n'
  )
})

test('docker backend: a timeout, memory or killed job keeps its container', async () => {
  await keptThrough(
    { id: `job-ends-${process.pid}`, backend: 'docker', languages: ['python'], executorPath: REPO_EXECUTOR },
    PYTHON_ENDS,
    PYTHON_PROBE,
    'False\n'
  )
})

test('pyodide backend: a timeout (soft stop) or a MemoryError within 64 MiB of growth keeps its isolate (pyodide has no signals: no job ends killed)', async () => {
  await keptThrough(
    { backend: 'pyodide', languages: ['python'] },
    [
      {
        name: 'timeout',
        request: { code: `open("${SCRATCH}", "w").write("x")\nwhile True: pass`, timeout_ms: 300 },
        status: 'timeout'
      },
      {
        name: 'memory',
        request: {
          code: `open("${SCRATCH}", "w").write("x")\na = []\nwhile True: a.append(bytearray(1024 * 1024))`,
          memory_mb: 32
        },
        status: 'memory'
      }
    ],
    PYTHON_PROBE,
    'False\n',
    (config) => new PyodideDriver({ config, logger: silentLogger, softStopMs: PATIENT_SOFT_STOP_MS })
  )
})

test('javascript backend: a timeout, an unsettled promise or a refused allocation keeps its isolate; a heap over its limit (isolated-vm disposes the isolate) is replaced as oom', async () => {
  const probe: ExecRequest = { language: 'javascript', code: 'console.log(typeof globalThis.leftBehind)' }
  await keptThrough(
    { languages: ['javascript'] },
    [
      {
        name: 'timeout',
        request: { language: 'javascript', code: 'globalThis.leftBehind = 1; while (true) {}', timeout_ms: 300 },
        status: 'timeout'
      },
      {
        name: 'unsettled promise',
        request: { language: 'javascript', code: 'globalThis.leftBehind = 1; new Promise(() => {})', timeout_ms: 300 },
        status: 'timeout'
      },
      {
        name: 'refused allocation',
        request: {
          language: 'javascript',
          code: 'globalThis.leftBehind = []; for (let i = 0; i < 1000; i++) leftBehind.push(new Uint8Array(16 * 1024 * 1024))',
          memory_mb: 64,
          timeout_ms: 30_000
        },
        status: 'memory'
      }
    ],
    probe,
    'undefined\n'
  )
  const runner = new Runner(runnerConfig({ languages: ['javascript'], poolSize: 1, maxSessions: 0 }), {
    logger: silentLogger
  })
  try {
    await runner.start()
    const heap = await runner.execute({
      language: 'javascript',
      code: 'const keep = []; while (true) keep.push(new Array(100000).fill(1.5))',
      memory_mb: 64,
      timeout_ms: 30_000
    })
    assert.equal(heap.status, 'memory')
    const next = await runner.execute(probe)
    assert.deepEqual([next.status, next.stdout], ['ok', 'undefined\n'])
    assert.notEqual(next.sandbox, heap.sandbox, 'the disposed isolate was replaced')
    assert.deepEqual(await replacements(runner), { oom: 1 }, 'counted under its reason')
    assert.match(
      runner.info().isolation.javascript?.properties.join('\n') ?? '',
      /it is replaced when a job's heap goes over memory_mb/,
      'and the report says it is'
    )
  } finally {
    await runner.close()
  }
})
