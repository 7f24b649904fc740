/**
 * The runner's configuration: one schema with defaults and no unknown keys, read from flags
 * (`--pool-size 4`, `--pool-size=4`) and `SANDFLEET_*` variables (`SANDFLEET_POOL_SIZE=4`) into a
 * frozen, typed object. Precedence: defaults < environment < flags < explicit overrides. A bad
 * configuration throws one {@link ConfigError} listing every problem.
 */
import { availableParallelism, hostname } from 'node:os'
import { Type, type Static, type TInteger, type TSchema } from '@sinclair/typebox'
import { Value, ValuePointer } from '@sinclair/typebox/value'
import { GRACES, ISOLATION_LEVELS, LANGUAGES, LIMITS, QUEUE_TIMEOUT_MS } from '@sandfleet/protocol'
import {
  configEnvName,
  configFlagName,
  configFlags,
  defineCommand,
  parseCommandLine,
  CommandLineError,
  type FlagSpec,
  schemaErrorMessage
} from '@sandfleet/command-line'
import { ConfigError } from './errors.ts'
import { DOCKER_DEFAULTS, DOCKER_SETTINGS } from './backends/docker/docker-config.ts'
import { PYODIDE_DEFAULTS, PYODIDE_SETTINGS } from './backends/pyodide/pyodide-config.ts'
import { DEFAULT_MAX_JOBS_PER_SANDBOX } from './sandbox/contract.ts'

/** Backends the runner's Python pool can use; `auto` picks the strongest available. */
export const BACKENDS = ['auto', 'process', 'docker', 'pyodide', 'unsafe'] as const
/** A backend choice. */
export type Backend = (typeof BACKENDS)[number]

const int = (minimum: number, maximum: number, description: string): TInteger =>
  Type.Integer({ minimum, maximum, description })

/** Schema of {@link RunnerConfig}: every key, its bounds and its meaning. */
export const RunnerConfigSchema = Type.Object(
  {
    id: Type.String({
      minLength: 1,
      maxLength: 128,
      description: 'Runner id, unique in the fleet (default runner-<host>-<pid>)'
    }),
    host: Type.String({ minLength: 1, description: 'Address the internal API listens on' }),
    port: int(0, 65_535, 'Port the internal API listens on (0: any free port)'),
    backend: Type.Union(
      BACKENDS.map((b) => Type.Literal(b)),
      {
        description:
          'Driver of the Python pool; auto = strongest isolation available; unsafe = no isolation (prints a warning)'
      }
    ),
    languages: Type.Array(Type.Union(LANGUAGES.map((l) => Type.Literal(l))), {
      uniqueItems: true,
      description: 'Languages served (empty: every language with an available driver)'
    }),
    poolSize: int(
      1,
      4096,
      'Pre-warmed sandboxes per language (default: twice the number of cores; a driver may keep fewer: javascript at most cores + 1)'
    ),
    maxJobsPerSandbox: int(0, Number.MAX_SAFE_INTEGER, 'Jobs a sandbox runs before it is replaced (0: no limit)'),
    maxQueuedJobs: int(0, 1_000_000, 'Jobs waiting for a sandbox before new ones are answered overloaded'),
    queueTimeoutMs: int(
      1,
      LIMITS.maxTimeoutMs,
      'Longest a job waits for a sandbox before it is answered queue_timeout'
    ),
    drainTimeoutMs: int(0, LIMITS.maxTimeoutMs, 'On shutdown, how long queued and running jobs may finish'),
    replaceBackoffMs: int(1, 60_000, 'First delay before retrying a sandbox that failed to start (doubles)'),
    replaceBackoffMaxMs: int(1, 600_000, 'Longest delay between retries of a sandbox that fails to start'),
    maxTimeoutMs: int(LIMITS.minTimeoutMs, LIMITS.maxTimeoutMs, 'Largest timeout_ms accepted'),
    maxMemoryMb: int(LIMITS.minMemoryMb, LIMITS.maxMemoryMb, 'Largest memory_mb accepted'),
    maxCodeBytes: int(1, 64 * 1024 * 1024, 'Largest code accepted, in UTF-8 bytes'),
    maxBodyBytes: int(
      1024,
      1024 * 1024 * 1024,
      'Largest HTTP request body, in bytes; a larger one is refused with 413'
    ),
    maxOutputBytes: int(
      0,
      64 * 1024 * 1024,
      'Bytes kept of stdout and of stderr each; the rest is dropped and marked truncated'
    ),
    maxJudgeOutputBytes: int(
      0,
      256 * 1024 * 1024,
      "Bytes kept of each judged test's stdout and stderr: a test that prints more is output_limit (the result gives back maxOutputBytes of each)"
    ),
    judgeCacheBytes: int(
      0,
      64 * 1024 * 1024 * 1024,
      'Bytes of compiled programs the compile cache keeps (least recently used dropped first; 0: none kept)'
    ),
    graceMs: int(
      0,
      600_000,
      "Beyond timeout_ms and the backend's own stop time, how long a sandbox may take to answer before its job is answered infra_error (stalled: the fleet's fault) and the sandbox killed"
    ),
    freezeMs: int(
      50,
      600_000,
      "A jump of the runner's own clock longer than this is a freeze (the runner paused, stopped or its event loop blocked): a job whose hard deadline it slept through, or that its sandbox answered timeout across it, is answered infra_error (stalled), not timeout"
    ),
    replayCalls: int(
      0,
      1_000_000,
      "Calls with a request_id remembered after they ran (0: none): the same request sent again with the same id gets the first run's answer (replayed), or waits for it while it runs, instead of running twice; results held at most 64 MiB"
    ),
    replayWindowS: int(1, 86_400, 'How long a call that ran is remembered for its retries, in seconds'),
    isolation: Type.Union(
      ISOLATION_LEVELS.map((l) => Type.Literal(l)),
      {
        description:
          'Isolation level of Python jobs that name none (process and docker backends): fork (a fresh process per job) or reuse (a warm process reused while a check after each job proves it clean; a job may still ask for fork)'
      }
    ),
    allowReuse: Type.Boolean({
      description:
        'Whether a job may run at the reuse isolation level (false: every job runs at fork, whatever it or isolation asks)'
    }),
    pythonPath: Type.String({ minLength: 1, description: 'Python interpreter of the process and unsafe backends' }),
    executorPath: Type.String({
      description:
        "Path of executor.py (empty: the one shipped in sandbox-images/python; docker backend: bound over the image's when set, else the image's own)"
    }),
    ...DOCKER_SETTINGS,
    sandboxMemoryMb: int(
      0,
      LIMITS.maxMemoryMb * 2,
      "Memory limit of one whole sandbox through cgroups (0: maxMemoryMb + 512; docker backend: 1024; pyodide: each sandbox's share of its host process's ceiling, 0: maxMemoryMb + 1024)"
    ),
    sandboxPids: int(0, 1_000_000, 'Process limit of one whole sandbox through cgroups (0: none; docker backend: 128)'),
    ...PYODIDE_SETTINGS,
    runnerSecret: Type.String({
      description:
        'Shared secret of the fleet: every call but /healthz and /readyz must carry it as Authorization: Bearer SECRET (at least 16 characters; empty: no secret asked, for a runner only gateways can reach)'
    }),
    maxSessions: int(0, 100_000, 'Stateful sessions held at once (0: sessions disabled)'),
    maxSessionsPerKey: int(1, 100_000, 'Sessions one API key may hold at once on this runner'),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { description: 'Log level of `sandfleet runner`' }
    )
  },
  { additionalProperties: false }
)

/** The runner's configuration, frozen. Build it with {@link parseRunnerConfig} or {@link runnerConfig}. */
export type RunnerConfig = Readonly<Static<typeof RunnerConfigSchema>>
/** A partial configuration: what a caller overrides; the rest takes its default. */
export type RunnerConfigInput = Partial<Static<typeof RunnerConfigSchema>>

/** The defaults, computed on this host. */

export function runnerConfigDefaults(): Static<typeof RunnerConfigSchema> {
  return {
    id: `runner-${hostname()}-${process.pid}`,
    host: '127.0.0.1',
    port: 8080,
    backend: 'auto',
    languages: [],
    // Twice the cores: a slot also waits on its result's trip back through the runner, so a pool
    // of `cores` leaves CPU idle, and more slots cost memory for little (benchmarks/RESULTS.md,
    // "Pool size").
    poolSize: 2 * availableParallelism(),
    maxJobsPerSandbox: DEFAULT_MAX_JOBS_PER_SANDBOX,
    maxQueuedJobs: 8192,
    queueTimeoutMs: QUEUE_TIMEOUT_MS,
    drainTimeoutMs: 20_000,
    replaceBackoffMs: 100,
    replaceBackoffMaxMs: 5000,
    maxTimeoutMs: 300_000,
    maxMemoryMb: 4096,
    maxCodeBytes: 1024 * 1024,
    maxBodyBytes: 32 * 1024 * 1024,
    maxOutputBytes: 64 * 1024,
    maxJudgeOutputBytes: 8 * 1024 * 1024,
    judgeCacheBytes: 256 * 1024 * 1024,
    graceMs: GRACES.sandboxMs,
    freezeMs: 1000,
    replayCalls: 4096,
    replayWindowS: 300,
    isolation: 'fork',
    allowReuse: true,
    pythonPath: 'python3',
    executorPath: '',
    ...DOCKER_DEFAULTS,
    sandboxMemoryMb: 0,
    sandboxPids: 512,
    ...PYODIDE_DEFAULTS,
    runnerSecret: '',
    maxSessions: 1000,
    maxSessionsPerKey: 100,
    logLevel: 'info'
  }
}

/** Shortest shared secret accepted (a guessable one is no secret). */
export const MIN_SECRET_CHARS = 16

type Key = keyof Static<typeof RunnerConfigSchema>
const KEYS = Object.keys(RunnerConfigSchema.properties) as Key[]

/** Flag name (without `--`) → config key, e.g. `pool-size` → `poolSize`. */
export const RUNNER_FLAGS: ReadonlyMap<string, Key> = new Map(KEYS.map((k) => [configFlagName(k), k]))
/** Environment variable → config key, e.g. `SANDFLEET_POOL_SIZE` → `poolSize`. */
export const RUNNER_ENV: ReadonlyMap<string, Key> = new Map(KEYS.map((k) => [configEnvName(k), k]))

/** `sandfleet runner`: every key of the config is a flag and a `SANDFLEET_*` variable. */
export const RUNNER_COMMAND = defineCommand({
  name: 'sandfleet runner',
  summary:
    'One runner and its internal API (for gateways); it says at start-up which backend it chose, and drains on SIGTERM.',
  flags: withDefaults(configFlags(RunnerConfigSchema))
})

/** The flags' help with this host's defaults. */
function withDefaults(flags: Record<string, FlagSpec>): Record<string, FlagSpec> {
  const defaults = runnerConfigDefaults() as Record<string, unknown>
  return Object.fromEntries(
    Object.entries(flags).map(([name, flag]) => {
      const d = defaults[name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())]
      const shown = Array.isArray(d) ? d.join(',') : String(d)
      return [name, shown === '' || name === 'id' ? flag : { ...flag, help: `${flag.help} (default ${shown})` }]
    })
  )
}

/** Where the configuration comes from. */
export interface ConfigSources {
  /** Command-line arguments after the command (`['--pool-size', '4']`). */
  argv?: readonly string[]
  /** Environment; only the `SANDFLEET_*` names of this schema are read. */
  env?: Readonly<Record<string, string | undefined>>
  /**
   * Flags already read (by a command that takes more than the runner's), keyed like the config; text is converted like
   * a flag's.
   */
  values?: Readonly<Record<string, unknown>>
  /** Values set by code; they win over flags and environment. */
  overrides?: RunnerConfigInput
  /** When true, flags this schema does not know are returned in `rest` instead of being problems. */
  allowUnknownFlags?: boolean
}

function coerce(key: Key, raw: string): unknown {
  const schema = RunnerConfigSchema.properties[key] as TSchema & { type?: string }
  if (schema.type === 'integer') return /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw
  if (schema.type === 'array')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  if (schema.type === 'boolean')
    return raw === '' || raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw
  return raw
}

/**
 * Reads flags, environment and overrides into a frozen {@link RunnerConfig}.
 * Throws a {@link ConfigError} listing every problem (unknown flag, wrong type, out of range).
 */
export function parseRunnerConfig(sources: ConfigSources = {}): RunnerConfig {
  return readRunnerConfig(sources).config
}

/**
 * Like {@link parseRunnerConfig}, and also returns the arguments it did not take (with
 * `allowUnknownFlags`), for a command line that mixes the runner's flags with others.
 */
export function readRunnerConfig(sources: ConfigSources = {}): { config: RunnerConfig; rest: string[] } {
  return parseWithRest(sources)
}

function parseWithRest(sources: ConfigSources): { config: RunnerConfig; rest: string[] } {
  const problems: string[] = []
  const values: Record<string, unknown> = runnerConfigDefaults()
  const origin: Record<string, string> = {}
  for (const [name, key] of RUNNER_ENV) {
    const raw = sources.env?.[name]
    if (raw === undefined || raw === '') continue
    values[key] = coerce(key, raw)
    origin[key] = name
  }
  let parsed: ReturnType<typeof parseCommandLine<typeof RUNNER_COMMAND.flags>>
  try {
    parsed = parseCommandLine(RUNNER_COMMAND, sources.argv ?? [], undefined, { passUnknown: true })
  } catch (err) {
    throw err instanceof CommandLineError ? new ConfigError([...err.problems]) : err
  }
  const rest = sources.allowUnknownFlags === true ? parsed.rest : []
  if (sources.allowUnknownFlags !== true) {
    for (let i = 0; i < parsed.rest.length; i++) {
      const arg = parsed.rest[i]
      if (!arg.startsWith('--')) {
        problems.push(`unexpected argument "${arg}"`)
        continue
      }
      problems.push(`unknown flag ${arg.split('=')[0]}`)
      if (!arg.includes('=') && parsed.rest[i + 1] !== undefined && !parsed.rest[i + 1].startsWith('--')) i++
    }
  }
  for (const [key, value] of Object.entries({ ...parsed.values, ...sources.values })) {
    if (value === undefined) continue
    if (!KEYS.includes(key as Key)) {
      problems.push(`--${configFlagName(key)}: unknown flag`)
      continue
    }
    values[key] = typeof value === 'string' ? coerce(key as Key, value) : value
    origin[key] = `--${configFlagName(key)}`
  }
  for (const [key, value] of Object.entries(sources.overrides ?? {})) {
    if (value === undefined) continue
    if (!KEYS.includes(key as Key)) {
      problems.push(`unknown key "${key}"`)
      continue
    }
    values[key] = value
    origin[key] = 'overrides'
  }
  for (const error of Value.Errors(RunnerConfigSchema, values)) {
    const key = error.path.split('/')[1] ?? ''
    const where = origin[key] === undefined ? key : `${key} (${origin[key]})`
    problems.push(
      `${where}: ${schemaErrorMessage(error)} (got ${JSON.stringify(ValuePointer.Get(values, error.path))})`
    )
  }
  if (problems.length === 0 && (values.replaceBackoffMaxMs as number) < (values.replaceBackoffMs as number)) {
    problems.push('replaceBackoffMaxMs: must be ≥ replaceBackoffMs')
  }
  if (problems.length === 0 && values.isolation === 'reuse' && values.allowReuse === false) {
    problems.push(
      `isolation${origin.isolation === undefined ? '' : ` (${origin.isolation})`}: reuse, but allowReuse is false`
    )
  }
  const secret = values.runnerSecret
  if (typeof secret === 'string' && secret !== '' && secret.length < MIN_SECRET_CHARS) {
    problems.push(
      `runnerSecret${origin.runnerSecret === undefined ? '' : ` (${origin.runnerSecret})`}: must be at least ${MIN_SECRET_CHARS} characters (got ${secret.length})`
    )
  }
  if (problems.length > 0) throw new ConfigError(problems)
  values.languages = Object.freeze([...(values.languages as string[])])
  values.pyodidePreimport = Object.freeze([...(values.pyodidePreimport as string[])])
  return { config: Object.freeze(values) as RunnerConfig, rest }
}

/** A frozen configuration from code: the defaults with `input` applied, validated. */
export function runnerConfig(input: RunnerConfigInput = {}): RunnerConfig {
  return parseWithRest({ overrides: input }).config
}
