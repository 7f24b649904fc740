/**
 * The harness's parameters, from flags (`--duration 5`) or `SANDFLEET_BENCH_*` variables
 * (`SANDFLEET_BENCH_DURATION=5`); flags win. Read by the CLI's one parser (@sandfleet/protocol). A bad value throws one
 * error listing every problem.
 */
import { existsSync } from 'node:fs'
import { CommandLineError, commandHelp, defineCommand, parseCommandLine } from '@sandfleet/command-line'
import { wrkAvailable } from './wrk.ts'
import { TARGETS, type TargetName } from './run/targets.ts'
import { parseThreshold, type Threshold } from './run/thresholds.ts'
import { RL_STEP_DEFAULTS, WORKLOADS, type RlStepShape, type WorkloadName } from './workloads/calls.ts'
import type { JudgeBenchOptions } from './scenarios/judge.ts'
import { JUDGE_BENCH_LANGUAGES, type JudgeBenchLanguage } from './workloads/judge-problems.ts'

/** Parameters of a product run (`step`, `closed`, `open`). */
export interface RunOptions {
  target: TargetName
  workload: WorkloadName
  seed: number
  file: string | undefined
  sleepS: number
  /** `rl-hostile`: share of the calls drawn from the hostile calls. */
  hostileShare: number
  /** `rl-step`: its shares of time-outs and long calls. */
  step: RlStepShape
  /** `step`: calls released at once. */
  calls: number
  /** `open`: calls per second. */
  rate: number
  thresholds: Threshold[]
  /** Reports go to OUT.json, OUT.md and OUT.html (OUT-2.*, OUT-3.*, … when those exist: nothing is overwritten). */
  out: string
  /** The port the fleet it starts listens on, on 127.0.0.1 (the gateway's, with runner processes); 0: a free one. */
  port: number
  /** 0: one `sandfleet serve`; N: a `sandfleet gateway` and N `sandfleet runner` processes. */
  runnerProcesses: number
  gatewayArgs: string[]
  runnerArgs: string[]
  progress: 'auto' | 'tty' | 'lines' | 'none'
  requestTimeoutS: number
}

/** Parameters shared by every scenario. */
export interface BenchOptions {
  /** An existing fleet to measure; without it each scenario starts its own `sandfleet serve`. */
  url: string | undefined
  /** Recorded seconds of each load run. */
  durationS: number
  /** Seconds of load before recording starts. */
  warmupS: number
  /** Overrides each scenario's concurrency. */
  concurrency: number | undefined
  /** Keep-alive connections of the load generator (default: the concurrency). */
  connections: number | undefined
  /** Calls per request of the batch scenario. */
  batchSize: number
  /** `--pool-size` of the fleets the harness starts (default: the runner's default). */
  poolSize: number | undefined
  /** `--backend` of the fleets the harness starts. */
  backend: string
  /** Pool sizes the `pool-size` scenario compares. */
  sizes: number[]
  /** Interleaved rounds of the `pool-size` scenario. */
  rounds: number
  /** Timeouts the `timeout-cost` scenario provokes (and the docker scenario's rounds). */
  repeats: number
  /** Idle sessions the `sessions-idle` scenario opens. */
  sessions: number
  /** Interpreter of the naive baseline. */
  python: string
  /** Print one JSON document on stdout (human output goes to stderr). */
  json: boolean
  /** The load generator: `wrk` (C, ~0.03 ms of CPU per call) when it is installed, else `undici` (~0.2–0.4 ms). */
  engine: 'wrk' | 'undici'
  /** The product run's parameters. */
  run: RunOptions
  /** The judge scenario's parameters. */
  judge: JudgeBenchOptions
}

const env = (flag: string): string => `SANDFLEET_BENCH_${flag.replace(/-/g, '_').toUpperCase()}`

/** The harness's command line: its flags (each with a `SANDFLEET_BENCH_<FLAG>` variable too). */
export const BENCH_COMMAND = defineCommand({
  name: 'sandfleet bench',
  positionals: 'MODE|SCENARIO',
  summary:
    'The load-testing harness (also `npm run bench -- SCENARIO [flags]`): drives a real fleet and prints its figures beside machine, date and commit.',
  flags: {
    url: {
      type: 'string',
      env: env('url'),
      placeholder: 'URL',
      help: 'existing fleet to measure (default: start `sandfleet serve` on 127.0.0.1, a free port); refused by the scenarios that time fleets of their own (docker, pyodide, javascript, isolates, pool-size)'
    },
    duration: { type: 'number', env: env('duration'), min: 0.01, default: 10, help: 'recorded seconds per load run' },
    warmup: { type: 'number', env: env('warmup'), min: 0, default: 2, help: 'seconds of load before recording' },
    concurrency: {
      type: 'integer',
      env: env('concurrency'),
      min: 1,
      help: "requests in flight (default: the scenario's)"
    },
    connections: {
      type: 'integer',
      env: env('connections'),
      min: 1,
      help: 'keep-alive connections (default: the concurrency)'
    },
    'batch-size': { type: 'integer', env: env('batch-size'), min: 1, default: 64, help: 'calls per batch request' },
    'pool-size': {
      type: 'integer',
      env: env('pool-size'),
      min: 1,
      help: "sandboxes of the started fleet (default: the runner's default)"
    },
    backend: {
      type: 'string',
      env: env('backend'),
      default: 'process',
      help: 'backend of the started fleet (process: the one the targets are set for)'
    },
    sizes: {
      type: 'list',
      items: 'integer',
      min: 1,
      env: env('sizes'),
      default: ['2', '4', '8'],
      help: 'pool sizes compared by the pool-size scenario'
    },
    rounds: {
      type: 'integer',
      env: env('rounds'),
      min: 1,
      default: 3,
      help: 'interleaved rounds of the pool-size scenario'
    },
    repeats: {
      type: 'integer',
      env: env('repeats'),
      min: 1,
      default: 10,
      help: "timeouts provoked by timeout-cost (and rounds of the docker scenario's kills and timeouts)"
    },
    sessions: {
      type: 'integer',
      env: env('sessions'),
      min: 1,
      default: 500,
      help: 'idle sessions opened by sessions-idle'
    },
    python: {
      type: 'string',
      env: env('python'),
      placeholder: 'PATH',
      help: 'interpreter of the naive baseline and the fork prototype (default /usr/bin/python3 when present: no version-manager shim in front of it)'
    },
    json: { type: 'boolean', env: env('json'), help: 'print one JSON document on stdout' },
    engine: {
      type: 'string',
      env: env('engine'),
      choices: ['wrk', 'undici'],
      help: 'load generator: wrk (default when installed: apt-get install wrk) or undici'
    },
    target: {
      type: 'string',
      env: env('target'),
      choices: TARGETS,
      default: 'single',
      help: `step/closed/open: the API called, ${TARGETS.join(' | ')}`
    },
    workload: {
      type: 'string',
      env: env('workload'),
      choices: WORKLOADS,
      default: 'trivial',
      help: `step/closed/open: the calls, ${WORKLOADS.join(' | ')} (jsonl reads --file)`
    },
    file: {
      type: 'string',
      env: env('file'),
      placeholder: 'PATH',
      help: 'step/closed/open: JSONL of {code, stdin?, timeout_ms?, expect?} (expect: a stdout string or {status?, stdout?})'
    },
    seed: { type: 'integer', env: env('seed'), min: 0, default: 1, help: 'step/closed/open: seed of the rl-mix draw' },
    sleep: {
      type: 'number',
      env: env('sleep'),
      min: 0,
      default: 0.3,
      help: 'step/closed/open: seconds each call of the sleep workload sleeps'
    },
    'hostile-share': {
      type: 'number',
      env: env('hostile-share'),
      min: 0,
      default: 0.05,
      help: "step/closed/open/soak: share of the rl-hostile (rl-tamper) workload's calls that are hostile (tampering)"
    },
    'timeout-share': {
      type: 'number',
      env: env('timeout-share'),
      min: 0,
      default: RL_STEP_DEFAULTS.timeoutShare,
      help: "step/closed/open: share of the rl-step workload's calls that run until their deadline"
    },
    'timeout-ms': {
      type: 'integer',
      env: env('timeout-ms'),
      min: 0,
      default: RL_STEP_DEFAULTS.timeoutMs,
      help: "step/closed/open: timeout_ms of rl-step's time-outs (0: the runaway calls' own, 300 ms)"
    },
    'long-share': {
      type: 'number',
      env: env('long-share'),
      min: 0,
      default: RL_STEP_DEFAULTS.longShare,
      help: "step/closed/open: share of the rl-step workload's calls that are long"
    },
    'long-ms': {
      type: 'integer',
      env: env('long-ms'),
      min: 1,
      default: RL_STEP_DEFAULTS.longMs,
      help: 'step/closed/open: CPU milliseconds an rl-step long call computes'
    },
    calls: { type: 'integer', env: env('calls'), min: 1, default: 1000, help: 'step: calls released at once' },
    rate: { type: 'number', env: env('rate'), min: 0.001, default: 100, help: 'open: calls per second' },
    threshold: {
      type: 'list',
      env: env('threshold'),
      placeholder: 'EXPR',
      help: "step/closed/open: pass/fail, repeatable: 'p99<2000', 'wrong==0' (metrics: p50 p90 p99 max mean rate duration_s calls right wrong failed retriable lost duplicated misrouted); exit 1 when one fails"
    },
    out: {
      type: 'string',
      env: env('out'),
      placeholder: 'PREFIX',
      default: 'sandfleet-bench-report',
      help: 'step/closed/open: the reports go to PREFIX.json, PREFIX.md, PREFIX.html (PREFIX-2.*, PREFIX-3.*, … when those exist: an earlier run is never overwritten)'
    },
    port: {
      type: 'integer',
      env: env('port'),
      min: 0,
      default: 0,
      help: 'step/closed/open/soak: the port the fleet it starts listens on, on 127.0.0.1 (its gateway with --runner-processes; default 0: a free one)'
    },
    'runner-processes': {
      type: 'integer',
      env: env('runner-processes'),
      min: 0,
      default: 0,
      help: 'step/closed/open: start a sandfleet gateway and N sandfleet runner processes instead of one sandfleet serve (0: serve)'
    },
    'gateway-args': {
      type: 'string',
      env: env('gateway-args'),
      placeholder: 'FLAGS',
      help: 'step/closed/open: extra flags of the started gateway (or serve), e.g. "--max-in-flight 4096"'
    },
    'runner-args': {
      type: 'string',
      env: env('runner-args'),
      placeholder: 'FLAGS',
      help: 'step/closed/open: extra flags of the started runners (or serve), e.g. "--max-queued-jobs 100000"'
    },
    progress: {
      type: 'string',
      env: env('progress'),
      choices: ['auto', 'tty', 'lines', 'none'],
      default: 'auto',
      help: 'step/closed/open: auto (a line rewritten on a terminal, else one every 10 s), tty, lines or none'
    },
    'code-judge-url': {
      type: 'string',
      env: env('code-judge-url'),
      placeholder: 'URL',
      help: 'judge: a code-judge to compare with, called as rStar2-Agent calls it (a submission a test)'
    },
    'sandbox-fusion-url': {
      type: 'string',
      env: env('sandbox-fusion-url'),
      placeholder: 'URL',
      help: "judge: a SandboxFusion to compare with, called as verl's reward calls it (a /run_code a test)"
    },
    problems: {
      type: 'integer',
      env: env('problems'),
      min: 1,
      default: 16,
      help: 'judge: problems of 20 tests each system judges a round, per language'
    },
    'judge-languages': {
      type: 'list',
      env: env('judge-languages'),
      default: ['python', 'cpp'],
      help: `judge: the languages judged (${JUDGE_BENCH_LANGUAGES.join(', ')})`
    },
    submissions: {
      type: 'integer',
      env: env('submissions'),
      min: 0,
      default: 240,
      help: 'judge: mixed submissions sent at once after the rounds, every verdict checked (0: none)'
    },
    'request-timeout': {
      type: 'number',
      env: env('request-timeout'),
      min: 1,
      default: 600,
      help: 'step/closed/open: seconds a request may wait for its response headers or next chunk'
    }
  }
})

/**
 * Parses `argv` (the scenario name among them) and `env`; returns the options and positionals (`help`: print the
 * usage).
 */
export function parseBenchArgs(
  argv: readonly string[],
  environment: Readonly<Record<string, string | undefined>>
): { options: BenchOptions; positionals: string[]; help: boolean } {
  const problems: string[] = []
  let parsed
  try {
    parsed = parseCommandLine(BENCH_COMMAND, argv, environment)
  } catch (err) {
    if (!(err instanceof CommandLineError)) throw err
    problems.push(...err.problems)
  }
  const v = parsed?.values ?? {}
  const sizes = (v.sizes ?? ['2', '4', '8']).map(Number)
  const options: BenchOptions = {
    url: v.url,
    durationS: v.duration ?? 10,
    warmupS: v.warmup ?? 2,
    concurrency: v.concurrency,
    connections: v.connections,
    batchSize: v.batchSize ?? 64,
    poolSize: v.poolSize,
    backend: v.backend ?? 'process',
    sizes,
    rounds: v.rounds ?? 3,
    repeats: v.repeats ?? 10,
    sessions: v.sessions ?? 500,
    python: v.python ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'),
    json: v.json === true,
    engine: 'undici',
    run: runOptions(v, problems),
    judge: judgeOptions(v, problems)
  }
  const engine = v.engine ?? (wrkAvailable() ? 'wrk' : 'undici')
  if (engine === 'wrk' && !wrkAvailable()) problems.push('--engine wrk: wrk is not installed (apt-get install wrk)')
  else options.engine = engine as BenchOptions['engine']
  if (problems.length > 0) throw new Error(`bad benchmark parameters:\n  ${problems.join('\n  ')}`)
  return { options, positionals: parsed?.positionals ?? [], help: parsed?.help ?? false }
}

/** The judge scenario's options from the parsed values; problems are added to `problems`. */
function judgeOptions(v: Partial<Record<string, unknown>>, problems: string[]): JudgeBenchOptions {
  const languages = ((v.judgeLanguages as string[] | undefined) ?? ['python', 'cpp']).filter((l) => {
    const known = (JUDGE_BENCH_LANGUAGES as readonly string[]).includes(l)
    if (!known) problems.push(`--judge-languages: ${l} is not one of ${JUDGE_BENCH_LANGUAGES.join(', ')}`)
    return known
  }) as JudgeBenchLanguage[]
  return {
    codeJudgeUrl: v.codeJudgeUrl as string | undefined,
    sandboxFusionUrl: v.sandboxFusionUrl as string | undefined,
    problems: (v.problems as number | undefined) ?? 16,
    languages,
    submissions: (v.submissions as number | undefined) ?? 240
  }
}

/** The product run's options from the parsed values; problems are added to `problems`. */
function runOptions(v: Partial<Record<string, unknown>>, problems: string[]): RunOptions {
  const thresholds: Threshold[] = []
  for (const text of (v.threshold as string[] | undefined) ?? []) {
    try {
      thresholds.push(parseThreshold(text))
    } catch (err) {
      problems.push((err as Error).message)
    }
  }
  const words = (x: unknown): string[] => (typeof x === 'string' ? x.split(/\s+/).filter((w) => w !== '') : [])
  const file = v.file as string | undefined
  const workload = (v.workload ?? 'trivial') as WorkloadName
  if (workload === 'jsonl' && file === undefined) problems.push('--workload jsonl: needs --file PATH')
  if (((v.hostileShare ?? 0) as number) > 1)
    problems.push(`--hostile-share (${env('hostile-share')}): a share, at most 1`)
  if (((v.port ?? 0) as number) > 65535) problems.push(`--port (${env('port')}): a port, at most 65535`)
  const step: RlStepShape = {
    timeoutShare: (v.timeoutShare ?? RL_STEP_DEFAULTS.timeoutShare) as number,
    timeoutMs: (v.timeoutMs ?? RL_STEP_DEFAULTS.timeoutMs) as number,
    longShare: (v.longShare ?? RL_STEP_DEFAULTS.longShare) as number,
    longMs: (v.longMs ?? RL_STEP_DEFAULTS.longMs) as number
  }
  if (step.timeoutShare + step.longShare > 1)
    problems.push(
      `--timeout-share and --long-share (${env('timeout-share')}, ${env('long-share')}): shares, at most 1 together`
    )
  if (file !== undefined && !existsSync(file)) problems.push(`--file (${env('file')}): ${file} does not exist`)
  return {
    target: (v.target ?? 'single') as TargetName,
    workload,
    seed: (v.seed ?? 1) as number,
    file,
    sleepS: (v.sleep ?? 0.3) as number,
    hostileShare: (v.hostileShare ?? 0.05) as number,
    step,
    calls: (v.calls ?? 1000) as number,
    rate: (v.rate ?? 100) as number,
    thresholds,
    out: (v.out ?? 'sandfleet-bench-report') as string,
    port: (v.port ?? 0) as number,
    runnerProcesses: (v.runnerProcesses ?? 0) as number,
    gatewayArgs: words(v.gatewayArgs),
    runnerArgs: words(v.runnerArgs),
    progress: (v.progress ?? 'auto') as RunOptions['progress'],
    requestTimeoutS: (v.requestTimeout ?? 600) as number
  }
}

/** One line per flag, for the usage message. */
export function flagHelp(): string {
  return commandHelp(BENCH_COMMAND).split('\nflags:\n')[1]
}
