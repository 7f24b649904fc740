import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServe, type Server } from '../../src/fleet.ts'
import { runPlan } from '../../src/run/engine.ts'
import { TARGETS, TARGET_TABLE } from '../../src/run/targets.ts'
import type { BenchCall } from '../../src/workloads/calls.ts'
import { colourBounds, countColour, decodePng } from './png.ts'
import { workloadRound } from '../../src/serve-ab.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SANDFLEET_')))
const CHROMIUM = '/usr/bin/chromium'
let server: Server
let dir: string

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandfleet-bench-test-'))
  server = await startServe(['--backend', 'process', '--pool-size', '2'])
})
after(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

const CALLS: BenchCall[] = [
  { code: 'print(1+1)', status: 'ok', stdout: '2\n' },
  { code: 'print(input()[::-1])', stdin: 'abc', status: 'ok', stdout: 'cba\n' },
  { code: 'from fractions import Fraction\nprint(Fraction(3, 4) + Fraction(5, 6))', status: 'ok', stdout: '19/12\n' },
  { code: "print('x')\n1/0", status: 'error', stdout: 'x\n' }
]

test('the same calls as one step against every target API (native single, batch, NDJSON, /run_code, /run/long-batch) come back once each and right', async () => {
  for (const name of TARGETS) {
    const r = await runPlan({
      mode: 'step',
      url: server.url,
      target: TARGET_TABLE[name],
      callAt: (n) => CALLS[n % CALLS.length],
      calls: 40,
      batchSize: 8,
      connections: 4,
      rate: 0,
      durationS: 0,
      sampleMs: 100,
      requestTimeoutMs: 60_000
    })
    const a = r.accounting
    assert.deepEqual(
      [a.calls, a.right, a.wrong, a.failed, a.lost, a.duplicated, a.misrouted],
      [40, 40, 0, 0, 0, 0, 0],
      `${name}: ${JSON.stringify(a)}`
    )
    assert.equal(r.requests, TARGET_TABLE[name].batched ? 5 : 40, name)
    assert.equal(a.statuses.error, 10, `${name}: the expected errors came back as errors`)
    assert.equal(r.latencyMs.length, 40)
    assert.ok(r.samples.length >= 2 && r.samples.at(-1)?.done === 40)
  }
})

test('open and closed loops send for their duration and account for every call they sent', async () => {
  const open = await runPlan({
    mode: 'open',
    url: server.url,
    target: TARGET_TABLE.single,
    callAt: (n) => CALLS[n % CALLS.length],
    calls: 0,
    batchSize: 1,
    connections: 8,
    rate: 40,
    durationS: 1,
    sampleMs: 100,
    requestTimeoutMs: 60_000
  })
  assert.equal(open.accounting.calls, 40, 'an open loop sends rate × duration calls, whatever the answers do')
  assert.equal(open.accounting.right, 40, JSON.stringify(open.accounting))
  const closed = await runPlan({
    mode: 'closed',
    url: server.url,
    target: TARGET_TABLE.batch,
    callAt: (n) => CALLS[n % CALLS.length],
    calls: 0,
    batchSize: 4,
    connections: 2,
    rate: 0,
    durationS: 0.5,
    sampleMs: 100,
    requestTimeoutMs: 60_000
  })
  assert.ok(closed.accounting.calls >= 8 && closed.accounting.calls % 4 === 0)
  assert.equal(
    closed.accounting.right,
    closed.accounting.calls,
    'the requests out at the end were waited for, none lost'
  )
})

test('sandfleet bench step: a JSONL workload, progress without a flood, a failing threshold exits 1, and the reports are written, reading right in a browser', async () => {
  const file = join(dir, 'calls.jsonl')
  writeFileSync(
    file,
    CALLS.map((c) =>
      JSON.stringify({
        code: c.code,
        ...(c.stdin === undefined ? {} : { stdin: c.stdin }),
        expect: { status: c.status, stdout: c.stdout }
      })
    ).join('\n') + '\n'
  )
  const out = join(dir, 'report')
  const run = spawnSync(
    process.execPath,
    [
      '--no-node-snapshot',
      'bin/sandfleet.mjs',
      'bench',
      'step',
      '--url',
      server.url,
      '--calls',
      '120',
      '--target',
      'ndjson',
      '--batch-size',
      '16',
      '--connections',
      '4',
      '--workload',
      'jsonl',
      '--file',
      file,
      '--threshold',
      'wrong==0',
      '--threshold',
      'p50<0',
      '--out',
      out,
      '--json'
    ],
    { cwd: root, encoding: 'utf8', timeout: 120_000, env }
  )
  assert.equal(run.status, 1, run.stderr)
  assert.match(run.stderr, /threshold p50<0 failed/)
  const progress = run.stderr.split('\n').filter((l) => l.includes(' done '))
  assert.ok(
    progress.length >= 2 && progress.length <= 8,
    `progress during the run, and no flood of lines off a terminal:\n${run.stderr}`
  )
  assert.match(progress.at(-1) ?? '', /done 120\/120 \(100 %\)/, 'the last progress line is the end of the run')
  assert.ok(
    run.stderr.includes(`existing fleet at ${server.url}\n`) && !run.stderr.includes(`${server.url} at `),
    `the fleet named once, its URL once:\n${run.stderr}`
  )
  const report = JSON.parse(run.stdout)
  assert.match(
    report.environment.command,
    /^node bin\/sandfleet\.mjs bench step --url http:\/\/127\.0\.0\.1:\d+ --calls 120 /,
    'the command as it was run'
  )
  assert.deepEqual(
    [report.accounting.calls, report.accounting.right, report.accounting.lost, report.accounting.duplicated],
    [120, 120, 0, 0]
  )
  assert.ok(
    report.samples.length >= 40,
    `a step samples each time a fiftieth of its calls (3 here) is answered, however fast it ends: ${report.samples.length} samples`
  )
  assert.deepEqual(
    report.thresholds.map((t: { text: string; passed: boolean }) => [t.text, t.passed]),
    [
      ['wrong==0', true],
      ['p50<0', false]
    ]
  )
  assert.match(readFileSync(`${out}.md`, 'utf8'), /\| answered right \| 120 \|/)
  const html = readFileSync(`${out}.html`, 'utf8')
  assert.doesNotMatch(html, /<script|<link|src=|url\(/, 'nothing to fetch: the page opens with no network')

  // Rendered in headless Chromium: the DOM has the charts and figures, and the screenshot shows them.
  const args = (profile: string): string[] => [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    `--user-data-dir=${join(dir, profile)}`,
    '--window-size=1366,2400'
  ]
  const chromium = async (extra: string[], profile: string): Promise<string> =>
    await new Promise((resolve, reject) => {
      const child = spawn(CHROMIUM, [...args(profile), ...extra, `file://${out}.html`], {
        stdio: ['ignore', 'pipe', 'ignore']
      })
      let text = ''
      child.stdout.setEncoding('utf8').on('data', (s: string) => {
        text += s
      })
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.once('error', reject)
      child.once('close', (code) => {
        clearTimeout(timer)
        if (code === 0) resolve(text)
        else reject(new Error(`chromium exited ${String(code)}`))
      })
    })
  const shot = join(dir, 'shot.png')
  const [dom] = await Promise.all([chromium(['--dump-dom'], 'a'), chromium([`--screenshot=${shot}`], 'b')])
  for (const id of ['latency-histogram', 'throughput-over-time', 'in-flight-over-time'])
    assert.match(dom, new RegExp(`<svg id="${id}"`), id)
  assert.ok((dom.match(/class="bar"/g) ?? []).length >= 1)
  assert.match(dom, /<th>answered right<\/th><td>120<\/td>/)
  assert.match(dom, /Failed: p50&lt;0/)
  const pixels = decodePng(readFileSync(shot))
  assert.ok(countColour(pixels, '#4c78a8') > 2000, 'the histogram bars and the throughput line are drawn')
  assert.ok(countColour(pixels, '#f58518') > 100, 'the in-flight line is drawn')
  assert.ok(countColour(pixels, '#c62828') > 20, 'the failed threshold is shown in red')
  // The charts take the page's width, not half of it, and the percentile labels stay inside the
  // plot (the histogram's last bar and the throughput line end at its right edge).
  const blue = colourBounds(pixels, '#4c78a8')!
  assert.ok(
    blue.maxX - blue.minX > 0.6 * pixels.width,
    `charts ${blue.minX}–${blue.maxX} px of a ${pixels.width} px page`
  )
  const marks = colourBounds(pixels, '#e45756')!
  assert.ok(
    marks.maxX <= blue.maxX + 2,
    `the p50/p99 labels end at ${marks.maxX} px, inside the plot's right edge at ${blue.maxX} px`
  )
})

test("sandfleet bench step --workload rl-step: the calls' own CPU, replacements by reason, latency by class, checked by default (0 wrong, 0 lost)", async () => {
  const out = join(dir, 'rl-step')
  const run = spawnSync(
    process.execPath,
    [
      '--no-node-snapshot',
      'bin/sandfleet.mjs',
      'bench',
      'step',
      '--url',
      server.url,
      '--calls',
      '120',
      '--target',
      'batch',
      '--batch-size',
      '12',
      '--connections',
      '2',
      '--workload',
      'rl-step',
      '--timeout-share',
      '0.05',
      '--long-share',
      '0.05',
      '--long-ms',
      '30',
      '--progress',
      'none',
      '--out',
      out,
      '--json'
    ],
    { cwd: root, encoding: 'utf8', timeout: 300_000, env }
  )
  assert.equal(run.status, 0, run.stderr)
  const report = JSON.parse(run.stdout)
  assert.deepEqual(
    report.thresholds.map((t: { text: string }) => t.text),
    ['wrong==0', 'lost==0', 'duplicated==0', 'misrouted==0'],
    'the step is checked without a --threshold'
  )
  assert.deepEqual([report.accounting.right, report.accounting.wrong, report.accounting.lost], [120, 0, 0])
  assert.equal(report.cpu.measuredCalls, 120, 'every result carried its cpu_ms')
  assert.ok(report.cpu.callsMs > 0)
  assert.deepEqual(
    [report.cpu.fleetMs, report.cpu.usefulShare, report.cpu.unmeasured],
    [null, null, 'the fleet is not one this harness started (--url)']
  )
  assert.deepEqual(report.replacements, {}, "read from the fleet's /metrics: none replaced")
  assert.deepEqual(
    report.classes.map((c: { class: string }) => c.class),
    ['short', 'long', 'timeout']
  )
  assert.equal(
    report.classes.reduce((n: number, c: { calls: number }) => n + c.calls, 0),
    120
  )
  assert.ok(report.classes.every((c: { p50: number; p99: number }) => c.p50 > 0 && c.p99 >= c.p50))
  const md = readFileSync(`${out}.md`, 'utf8')
  assert.match(md, /\| the calls' own CPU \(sum of cpu_ms\) \| [\d,.]+ ms over 120 calls \|/)
  assert.match(md, /\| sandboxes replaced, by reason \| none \|/)
  assert.match(
    md,
    /\| latency p50 \/ p99 by class \| short \(\d+\) .* ms; long \(\d+\) .* ms; timeout \(\d+\) .* ms \|/
  )
  assert.match(
    readFileSync(`${out}.html`, 'utf8'),
    /<th>useful share \(the calls' CPU ÷ the fleet's\)<\/th><td>n\/a<\/td>/
  )
})

test("serve-ab's workload round: right calls/s, the fleet's CPU a call and the useful share of a fleet the harness started", async () => {
  const calls: BenchCall[] = [
    CALLS[0],
    CALLS[2],
    { code: 'while True: pass', timeoutMs: 200, status: 'timeout', stdout: '' }
  ]
  const round = await workloadRound(server.url, server.pid as number, calls, 0, 2, 1, 0)
  assert.equal(round.bad, 0)
  assert.ok(round.rightPerS > 0)
  assert.ok(round.cpuMsPerCall > 0)
  assert.ok(round.usefulShare > 0 && round.usefulShare < 1, `a share of the fleet's CPU: ${round.usefulShare}`)
})

test('sandfleet bench step --port: the fleet it starts listens there; a second run beside the first keeps both reports', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo
      probe.close(() => resolve(free))
    })
  })
  const out = join(dir, 'twice')
  const bench = (...flags: string[]): ReturnType<typeof spawnSync> =>
    spawnSync(
      process.execPath,
      ['--no-node-snapshot', 'bin/sandfleet.mjs', 'bench', 'step', '--calls', '8', '--connections', '2', ...flags],
      { cwd: root, encoding: 'utf8', timeout: 240_000, env }
    )
  const first = bench('--port', String(port), '--pool-size', '1', '--progress', 'none', '--out', out)
  assert.equal(first.status, 0, String(first.stderr))
  assert.match(
    String(first.stderr),
    new RegExp(`serve --host 127\\.0\\.0\\.1 --port ${port} .* at http://127\\.0\\.0\\.1:${port}\n`)
  )
  const report = readFileSync(`${out}.json`, 'utf8')
  assert.equal((JSON.parse(report) as { setup: { fleet: string } }).setup.fleet.includes(`--port ${port}`), true)
  const second = bench('--url', server.url, '--progress', 'none', '--out', out)
  assert.equal(second.status, 0, String(second.stderr))
  assert.match(String(second.stderr), /twice\.\* hold an earlier run's reports: this run's go to .*twice-2\.\*/)
  assert.equal(readFileSync(`${out}.json`, 'utf8'), report, 'the first report is untouched')
  for (const ext of ['json', 'md', 'html']) assert.ok(existsSync(`${out}-2.${ext}`), `${out}-2.${ext}`)
})

test('sandfleet bench --help lists the modes, the targets and the threshold flag, and exits 0', () => {
  const run = spawnSync(process.execPath, ['--no-node-snapshot', 'bin/sandfleet.mjs', 'bench', 'step', '--help'], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env
  })
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /step +N calls released at once/)
  assert.match(run.stdout, /--threshold/)
  assert.match(run.stdout, /single \|\s+batch \|\s+ndjson \|\s+run-code \|\s+long-batch/)
  assert.match(
    run.stdout,
    /# a first quick run[^\n]*\n[^\n]*\n {2}sandfleet bench step --calls 300 --workload rl-mix --connections 4\n/,
    'an example of a first quick run'
  )
  const long = run.stdout.split('\n').filter((l) => [...l].length > 80)
  assert.deepEqual(
    long,
    [],
    'off a terminal every line fits 80 columns: a terminal never cuts a flag such as --threshold'
  )
  const bad = spawnSync(
    process.execPath,
    ['--no-node-snapshot', 'bin/sandfleet.mjs', 'bench', 'step', '--target', 'grpc'],
    { cwd: root, encoding: 'utf8', timeout: 60_000, env }
  )
  assert.equal(bad.status, 2)
  assert.match(bad.stderr, /--target: must be one of single, batch, ndjson, run-code, long-batch, got "grpc"/)
  const threshold = spawnSync(
    process.execPath,
    ['--no-node-snapshot', 'bin/sandfleet.mjs', 'bench', 'step', '--threshold', 'p98<1', '--threshold', 'wrong==0'],
    { cwd: root, encoding: 'utf8', timeout: 60_000, env }
  )
  assert.equal(threshold.status, 2)
  assert.match(threshold.stderr, /--threshold "p98<1": unknown metric p98/)
})
