/**
 * The harness's parameters, from flags (`--duration 5`) or `SANDFLEET_BENCH_*` variables
 * (`SANDFLEET_BENCH_DURATION=5`); flags win. A bad value throws one error listing every problem.
 */
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { wrkAvailable } from './wrk.ts'

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
  /** Timeouts the `replace-after-timeout` scenario provokes. */
  repeats: number
  /** Idle sessions the `sessions-idle` scenario opens. */
  sessions: number
  /** Interpreter of the naive baseline. */
  python: string
  /** Print one JSON document on stdout (human output goes to stderr). */
  json: boolean
  /** The load generator: `wrk` (C, ~0.03 ms of CPU per call) when it is installed, else `undici` (~0.2–0.4 ms). */
  engine: 'wrk' | 'undici'
}

/** Flag → [type, help]; each has a `SANDFLEET_BENCH_<FLAG>` variable too. */
export const FLAGS = {
  url: ['string', 'existing fleet to measure (default: start `sandfleet serve` on 127.0.0.1, a free port); refused by the scenarios that time fleets of their own (docker, pyodide, javascript, isolates, pool-size)'],
  duration: ['number', 'recorded seconds per load run (default 10)'],
  warmup: ['number', 'seconds of load before recording (default 2)'],
  concurrency: ['number', "requests in flight (default: the scenario's)"],
  connections: ['number', 'keep-alive connections (default: the concurrency)'],
  'batch-size': ['number', 'calls per batch request (default 64)'],
  'pool-size': ['number', "sandboxes of the started fleet (default: the runner's default)"],
  backend: ['string', 'backend of the started fleet (default process, the one the targets are set for)'],
  sizes: ['string', 'pool sizes compared by the pool-size scenario (default 2,4,8)'],
  rounds: ['number', 'interleaved rounds of the pool-size scenario (default 3)'],
  repeats: ['number', 'timeouts provoked by replace-after-timeout (default 10)'],
  sessions: ['number', 'idle sessions opened by sessions-idle (default 500)'],
  python: ['string', 'interpreter of the naive baseline and the fork prototype (default /usr/bin/python3 when present: no version-manager shim in front of it)'],
  json: ['boolean', 'print one JSON document on stdout'],
  engine: ['string', 'load generator: wrk (default when installed: apt-get install wrk) or undici']
} as const

type Flag = keyof typeof FLAGS

const envName = (flag: string): string => `SANDFLEET_BENCH_${flag.replace(/-/g, '_').toUpperCase()}`

/** Parses `argv` (after the scenario name is taken out) and `env`; returns the options and positionals. */
export function parseBenchArgs (argv: readonly string[], env: Readonly<Record<string, string | undefined>>): { options: BenchOptions, positionals: string[] } {
  const spec = Object.fromEntries(Object.entries(FLAGS).map(([k, [type]]) => [k, { type: type === 'boolean' ? 'boolean' as const : 'string' as const }]))
  const { values, positionals } = parseArgs({ args: [...argv], options: spec, allowPositionals: true, strict: true })
  const problems: string[] = []
  const raw = (flag: Flag): string | boolean | undefined => (values as Record<string, string | boolean | undefined>)[flag] ?? env[envName(flag)]
  const num = (flag: Flag, fallback: number | undefined, integer: boolean, min: number): number | undefined => {
    const v = raw(flag)
    if (v === undefined || v === '') return fallback
    const n = Number(v)
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      problems.push(`--${flag} (${envName(flag)}): expected ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${JSON.stringify(v)}`)
      return fallback
    }
    return n
  }
  const str = (flag: Flag, fallback: string): string => { const v = raw(flag); return typeof v === 'string' && v !== '' ? v : fallback }
  const sizes = str('sizes', '2,4,8').split(',').map((s) => Number(s.trim()))
  if (sizes.some((n) => !Number.isInteger(n) || n < 1)) problems.push(`--sizes: expected integers ≥ 1 separated by commas, got ${str('sizes', '')}`)
  const jsonRaw = raw('json')
  const options: BenchOptions = {
    url: typeof raw('url') === 'string' && raw('url') !== '' ? raw('url') as string : undefined,
    durationS: num('duration', 10, false, 0.01) as number,
    warmupS: num('warmup', 2, false, 0) as number,
    concurrency: num('concurrency', undefined, true, 1),
    connections: num('connections', undefined, true, 1),
    batchSize: num('batch-size', 64, true, 1) as number,
    poolSize: num('pool-size', undefined, true, 1),
    backend: str('backend', 'process'),
    sizes,
    rounds: num('rounds', 3, true, 1) as number,
    repeats: num('repeats', 10, true, 1) as number,
    sessions: num('sessions', 500, true, 1) as number,
    python: str('python', existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'),
    json: jsonRaw === true || jsonRaw === 'true' || jsonRaw === '1',
    engine: 'undici'
  }
  const engine = str('engine', wrkAvailable() ? 'wrk' : 'undici')
  if (engine === 'wrk' && !wrkAvailable()) problems.push('--engine wrk: wrk is not installed (apt-get install wrk)')
  else if (engine === 'wrk' || engine === 'undici') options.engine = engine
  else problems.push(`--engine (${envName('engine')}): expected wrk or undici, got ${JSON.stringify(engine)}`)
  if (problems.length > 0) throw new Error(`bad benchmark parameters:\n  ${problems.join('\n  ')}`)
  return { options, positionals }
}

/** One line per flag, for the usage message. */
export function flagHelp (): string {
  return Object.entries(FLAGS).map(([k, [, help]]) => `  --${k.padEnd(12)} ${envName(k).padEnd(28)} ${help}`).join('\n')
}
