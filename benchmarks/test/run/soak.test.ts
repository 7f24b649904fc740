import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  healthFigures,
  SAMPLES_BY_PROGRESS,
  watchHealth,
  type HealthSample,
  type LingeringZombie
} from '../../src/run/health.ts'
import { checkThresholds, parseThreshold } from '../../src/run/thresholds.ts'

const root = fileURLToPath(new URL('../../../', import.meta.url))
// A secret in the fleet's environment: the hostile call that lists secret-looking variables must print [].
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SANDFLEET_'))),
  SOAK_TEST_SECRET_TOKEN: 'hunter2'
}

const sample = (done: number, rss: number, fds: number): HealthSample => ({
  tS: done,
  done,
  runnerRssMiB: rss,
  gatewayRssMiB: 100,
  runnerFds: fds,
  gatewayFds: 30,
  processes: 40,
  zombies: 0
})

test("health figures compare the run's last tenth with the tenth after warm-up, and count leaks between two rests", () => {
  const rest = { processes: 40, sandboxes: 4, containers: 0, zombies: 0 }
  const samples = [
    sample(0, 50, 10),
    sample(15, 100, 40),
    sample(18, 100, 40),
    sample(50, 300, 90),
    sample(95, 110, 44),
    sample(99, 110, 44)
  ]
  const zombie = (seenS: number): LingeringZombie => ({
    pid: 1,
    chain: 'bwrap>python3>python3',
    parentState: 'S',
    seenS
  })
  const f = healthFigures(samples, 100, [zombie(1), zombie(3), zombie(12)], 5, rest, {
    processes: 52,
    sandboxes: 5,
    containers: 0,
    zombies: 2
  })
  assert.equal(f.rss_growth_pct, 10)
  assert.equal(f.gateway_rss_growth_pct, 0)
  assert.equal(f.fd_growth, 4)
  assert.equal(f.zombies, 3, 'one zombie outlived the longest job, two are left at rest')
  assert.equal(f.late_reaps, 2, 'two were reaped late, within the longest job')
  assert.equal(f.leaked_sandboxes, 1, 'one sandbox more at rest after the run, however many processes each holds')
  const warmer = healthFigures(samples, 100, [], 5, rest, { processes: 48, sandboxes: 4, containers: 0, zombies: 0 })
  assert.equal(
    warmer.leaked_sandboxes,
    0,
    'sandboxes whose tiers finished warming during the run hold more processes: no leak'
  )
  const short = healthFigures([sample(50, 1, 1)], 100, [], 5, rest, rest)
  assert.deepEqual([short.rss_growth_pct, short.fd_growth], [null, null], 'no sample in a window: no figure')
  assert.deepEqual(
    checkThresholds([parseThreshold('fd_growth<=8')], { ...short }).map((t) => [t.actual, t.passed]),
    [[null, false]],
    'a threshold on a missing figure fails'
  )
})

test('the health watch samples by progress: every tenth of a run holds samples however fast its calls are answered', () => {
  const calls = 800
  // All answers within one turn of the event loop, as on a machine far faster than the sampling timer.
  const watch = watchHealth(process.pid, process.pid, calls, 60_000)
  for (let done = 1; done <= calls; done++) watch.answered(done)
  const { samples } = watch.stop()
  for (let tenth = 0; tenth < 10; tenth++) {
    const inIt = samples.filter((s) => s.done >= (tenth * calls) / 10 && s.done < ((tenth + 1) * calls) / 10)
    assert.ok(inIt.length >= SAMPLES_BY_PROGRESS / 10, `tenth ${tenth}: ${inIt.length} samples`)
  }
  const f = healthFigures(
    samples,
    calls,
    [],
    5,
    { processes: 0, sandboxes: 0, containers: 0, zombies: 0 },
    { processes: 0, sandboxes: 0, containers: 0, zombies: 0 }
  )
  assert.ok(f.rss_growth_pct !== null && f.fd_growth !== null, JSON.stringify(f))
})

test('a short soak: RL mix with 5 % hostile calls through one runner, every answer right, no zombie, no leak', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandfleet-soak-test-'))
  try {
    const run = spawnSync(
      process.execPath,
      [
        '--no-node-snapshot',
        'bin/sandfleet.mjs',
        'bench',
        'soak',
        '--calls',
        '800',
        '--workload',
        'rl-hostile',
        '--seed',
        '7',
        '--backend',
        'process',
        '--pool-size',
        '4',
        '--connections',
        '8',
        '--progress',
        'none',
        '--out',
        join(dir, 'soak'),
        '--json',
        // The bar, with room for a short run's RSS (it has not reached its plateau in 800 calls).
        ...[
          'wrong==0',
          'lost==0',
          'duplicated==0',
          'misrouted==0',
          'failed==0',
          'fd_growth<=8',
          'zombies==0',
          'leaked_sandboxes==0',
          'rss_growth_pct<=50'
        ].flatMap((t) => ['--threshold', t])
      ],
      { cwd: root, encoding: 'utf8', timeout: 300_000, env }
    )
    assert.equal(run.status, 0, run.stderr)
    const report = JSON.parse(run.stdout)
    assert.equal(report.accounting.calls, 800)
    for (const status of ['ok', 'error', 'timeout', 'killed'])
      assert.ok(
        report.accounting.statuses[status] > 0,
        `hostile calls ran: ${JSON.stringify(report.accounting.statuses)}`
      )
    assert.ok(report.health.before.processes > 0 && report.health.samples.length > 3, 'the runner was watched')
    assert.ok(report.thresholds.every((t: { passed: boolean }) => t.passed))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
