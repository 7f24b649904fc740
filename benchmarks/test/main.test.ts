import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
/** The environment without SANDFLEET_* settings, so the run takes the harness's defaults. */
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SANDFLEET_')))

test('bench runs trivial-c1 end to end against a real sandfleet serve and reports figures, runs and where they were taken', () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'benchmarks/src/main.ts', 'trivial-c1', '--duration', '1', '--warmup', '0.5', '--json'],
    { cwd: root, encoding: 'utf8', timeout: 180_000, env }
  )
  assert.equal(run.status, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  assert.equal(out.scenario, 'trivial-c1')
  assert.match(
    out.environment.command,
    /^node --no-node-snapshot --import tsx benchmarks\/src\/main\.ts trivial-c1 --duration 1 --warmup 0\.5 --json$/,
    'run as the entry point itself: recorded so'
  )
  assert.match(out.environment.commit, /^[0-9a-f]{7,}(-dirty)?$|^unknown$/)
  assert.ok(
    out.environment.machine.cores >= 1 && out.environment.machine.memoryGiB > 0 && out.environment.machine.kernel !== ''
  )
  assert.ok(!Number.isNaN(Date.parse(out.environment.date)))
  const p50 = out.figures.find((f: { name: string }) => f.name.startsWith('print(1+1) p50'))
  assert.deepEqual(p50.target, { op: '<=', value: 2 })
  assert.equal(typeof p50.value, 'number')
  const [r] = out.runs
  assert.equal(r.server, 'sandfleet')
  assert.equal(r.report.concurrency, 1)
  assert.ok(r.report.okCalls > 0, JSON.stringify(r.report.counts))
  assert.equal(r.report.failures, 0, JSON.stringify(r.report.counts))
  assert.match(out.notes[0], /sandfleet serve --host 127\.0\.0\.1 --port 0 --backend process/)
})

test('bench rejects an unknown scenario and a bad flag with the usage message', () => {
  const unknown = spawnSync(process.execPath, ['--import', 'tsx', 'benchmarks/src/main.ts', 'no-such-scenario'], {
    cwd: root,
    encoding: 'utf8'
  })
  assert.equal(unknown.status, 2)
  assert.match(unknown.stderr, /unknown scenario no-such-scenario[\s\S]*trivial-c64/)
  const bad = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'benchmarks/src/main.ts', 'trivial-c1', '--duration', 'soon'],
    { cwd: root, encoding: 'utf8' }
  )
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /--duration: needs a number, got "soon"/)
})

test('bench refuses --url for a scenario that starts a fleet of its own, naming the flag, and starts none', () => {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'benchmarks/src/main.ts', 'pyodide', '--url', 'http://127.0.0.1:9'],
    { cwd: root, encoding: 'utf8', timeout: 60_000, env }
  )
  assert.equal(run.status, 2, run.stderr)
  assert.match(
    run.stderr,
    /bench pyodide: --url: pyodide starts a fleet of its own \(sandfleet serve --backend pyodide --pool-size 4\), so it cannot measure the fleet at http:\/\/127\.0\.0\.1:9/
  )
  assert.doesNotMatch(run.stderr, /starting sandfleet serve|\n\s+at /)
})

test('bench runs the sessions group end to end: cell latency beside /v1/execute, 16 sessions, idle memory from /proc, compat overhead', () => {
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'benchmarks/src/main.ts',
      'sessions',
      '--duration',
      '1',
      '--warmup',
      '0.1',
      '--sessions',
      '4',
      '--json'
    ],
    { cwd: root, encoding: 'utf8', timeout: 240_000, env }
  )
  assert.equal(run.status, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  const figure = (prefix: string): { value: number; target?: unknown } => {
    const f = out.figures.find((x: { name: string }) => x.name.startsWith(prefix))
    assert.ok(f !== undefined, `no figure ${prefix}: ${out.figures.map((x: { name: string }) => x.name).join('; ')}`)
    return f
  }
  assert.deepEqual(figure('session cell x += 1 p50').target, { op: '<=', value: 2 })
  assert.ok(figure('session cell x += 1 p50').value > 0)
  assert.ok(figure('beside it: HTTP floor').value > 0)
  assert.ok(figure('session cell x += 1 ok cells/s, concurrency 16').value > 0)
  assert.equal(figure('idle sessions held by one runner').value, 4)
  assert.ok(figure('right after a cell: processes per session').value >= 1)
  assert.ok(figure('idle 11 s: processes per session').value >= 1)
  assert.ok(figure('memory per idle session: Pss').value > 0, 'the session processes were found and measured')
  assert.deepEqual(figure('/run_code over /v1/execute, p50 difference').target, { op: '<=', value: 0.2 })
  assert.ok(Number.isFinite(figure('/run over /v1/execute, median').value))
})

test('bench javascript-only reports the batch run beside the single calls: calls/s in batches of --batch-size with the 3,000/s target, and its CPU per call', () => {
  const run = spawnSync(
    process.execPath,
    [
      '--no-node-snapshot',
      '--import',
      'tsx',
      'benchmarks/src/main.ts',
      'javascript-only',
      '--duration',
      '1',
      '--warmup',
      '0.2',
      '--batch-size',
      '8',
      '--json'
    ],
    { cwd: root, encoding: 'utf8', timeout: 180_000, env }
  )
  assert.equal(run.status, 0, run.stderr)
  const out = JSON.parse(run.stdout)
  const names = out.figures.map((f: { name: string }) => f.name)
  const figure = (name: string): { value: number; target?: unknown } => {
    const f = out.figures.find((x: { name: string }) => x.name === name)
    assert.ok(f !== undefined, `no figure ${name}: ${names.join('; ')}`)
    return f
  }
  assert.deepEqual(figure('console.log(1+1) ok calls/s, batches of 8, 4 in flight').target, { op: '>=', value: 3000 })
  assert.ok(figure('console.log(1+1) ok calls/s, batches of 8, 4 in flight').value > 0)
  assert.ok(figure('fleet CPU per call, batches of 8, 4 in flight (user + kernel, whole process tree)').value > 0)
  assert.deepEqual(
    figure('console.log(1+1) ok calls/s, concurrency 16').target,
    { op: '>=', value: 3000 },
    'the single calls are still reported'
  )
  assert.ok(figure('console.log(1+1) p50, concurrency 1').value > 0)
  assert.deepEqual(
    out.runs.map((r: { report: { concurrency: number; callsPerRequest: number } }) => [
      r.report.concurrency,
      r.report.callsPerRequest
    ]),
    [
      [1, 1],
      [16, 1],
      [4, 8]
    ]
  )
  for (const r of out.runs) assert.equal(r.report.failures, 0, JSON.stringify(r.report.counts))
  assert.ok(
    out.runs[2].report.okCalls % 8 === 0 && out.runs[2].report.okCalls > 0,
    'every item of every batch answered 2'
  )
})
