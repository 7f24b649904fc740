/**
 * Where and when figures were taken: machine (cores, CPU, memory, kernel, load average at the
 * start, since this machine is shared), date, git commit and the exact command. Printed beside
 * every figure.
 */
import { execFileSync } from 'node:child_process'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { SANDBOX_PATH } from '@sandfleet/runner'
import { startCpuMeter } from './cpu.ts'
import { REPO_ROOT } from './fleet.ts'

/** The context of one benchmark run. */
export interface Environment {
  date: string
  commit: string
  command: string
  /** The load generator the runs used, when the harness knows it (`wrk` or `undici`). */
  loadGenerator?: string
  machine: {
    cores: number
    cpu: string
    memoryGiB: number
    kernel: string
    node: string
    /** 1-minute load average when the run started: other work on the machine shows here. */
    loadAverage1m: number
    /** Machine CPU busy over one second before the harness started anything (100 % = every core): the background. */
    backgroundBusyPct: number | undefined
    /** CPU µs a bare python3 spends per fork, child exit and wait (forkProbe): how fast the machine forks right now. */
    forkProbeUs: number | undefined
  }
}

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return ''
  }
}

/** The commit (short id, `-dirty` when the worktree has uncommitted changes), or `unknown`. */
export function gitCommit(): string {
  const id = git('rev-parse', '--short', 'HEAD')
  if (id === '') return 'unknown'
  return git('status', '--porcelain', '--untracked-files=no') === '' ? id : `${id}-dirty`
}

/**
 * The program the harness was started as, for a user to retype: what `sandfleet bench` says it
 * ran as (`_SANDFLEET_BENCH_COMMAND`: `sandfleet bench`, `node bin/sandfleet.mjs bench`), else
 * `npm run bench --` under npm's `bench` script, else the harness's own entry point.
 */
export function benchProgram(env: Readonly<Record<string, string | undefined>>): string {
  const told = env._SANDFLEET_BENCH_COMMAND
  if (told !== undefined && told !== '') return told
  return env.npm_lifecycle_event === 'bench'
    ? 'npm run bench --'
    : 'node --no-node-snapshot --import tsx benchmarks/src/main.ts'
}

/**
 * The command as a user would retype it: `program ARGS` (default {@link benchProgram}), after
 * the `SANDFLEET_*` variables that were set (the harness reads `SANDFLEET_BENCH_*`; the fleets it
 * starts inherit the others), except the test runner's `SANDFLEET_TEST_*`.
 */
export function commandLine(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  program = benchProgram(env)
): string {
  const vars = Object.entries(env)
    .filter(([k, v]) => k.startsWith('SANDFLEET_') && !k.startsWith('SANDFLEET_TEST_') && v !== undefined && v !== '')
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v ?? ''}`)
  const quoted = argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`))
  return [...vars, program, ...quoted].join(' ')
}

const FORK_PROBE = `
import os, sys, resource
def cpu():  # microsecond resolution (os.times counts clock ticks: 10 ms)
    return sum(r.ru_utime + r.ru_stime for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
n = int(sys.argv[1])
t0 = cpu()
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print(round((cpu() - t0) / n * 1e6))
`

/**
 * The CPU microseconds one fork of a bare python3 costs (parent's fork and wait, child's exit),
 * or undefined without python3. `python3` resolves on the process sandboxes' PATH, so it is the
 * interpreter the fleet forks (a pyenv build on a developer's PATH forked ×2.4 slower here). A sandboxed call is a
 * fork, so this shared machine's speed at fork moves every throughput figure: the probe says what state the machine was
 * in, so that runs taken at different times can be compared.
 */
export function forkProbe(forks = 300, python = 'python3'): number | undefined {
  try {
    const out = execFileSync(python, ['-I', '-c', FORK_PROBE, String(forks)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 30_000,
      env: { PATH: SANDBOX_PATH }
    })
    const us = Number(out.trim())
    return Number.isFinite(us) && us > 0 ? us : undefined
  } catch {
    return undefined
  }
}

/**
 * Captures the environment now (taking one second to sample the background CPU); `program` as in {@link commandLine}.
 */
export async function captureEnvironment(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  program = benchProgram(env)
): Promise<Environment> {
  const meter = startCpuMeter()
  await sleep(1000)
  const background = meter.stop().machineBusyPct
  return {
    date: new Date().toISOString(),
    commit: gitCommit(),
    command: commandLine(argv, env, program),
    machine: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      kernel: `${process.platform} ${release()}`,
      node: process.version,
      loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
      backgroundBusyPct: background,
      forkProbeUs: forkProbe()
    }
  }
}
