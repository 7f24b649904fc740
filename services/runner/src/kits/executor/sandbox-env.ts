/**
 * The environment the runner hands the executor and the session host (docs/executor-protocol.md),
 * every name written once: {@link SANDBOX_ENV}, which the drivers use through
 * {@link sandboxEnv}. The sandbox reads the same names from its own one table, `SANDBOX_ENV` in
 * `sandfleet_sandbox/sandbox_env.py`; `python-package.test.ts` holds the two equal.
 *
 * @example
 * ```ts
 * sandboxEnv({ workDir: '/tmp/work', isolation: 'fork' })
 * // { SANDFLEET_WORKDIR: '/tmp/work', SANDFLEET_ISOLATION: 'fork',
 * //   SANDFLEET_SOFT_STOP_MS: '500', SANDFLEET_MAX_FILE_MB: '64' }
 * ```
 */
import { SANDBOX_MAX_FILE_MB } from '../../sandbox/contract.ts'
import { EXECUTOR_SOFT_STOP_MS } from './executor-channel.ts'

/** Each variable the runner may hand a sandbox, by what it carries. */
export const SANDBOX_ENV = Object.freeze({
  /** The directory each job runs in, made fresh for it. */
  workDir: 'SANDFLEET_WORKDIR',
  /** Directories a job may write in beside it, `:`-separated, emptied after each job ({@link SCRATCH_DIRS}). */
  scratch: 'SANDFLEET_SCRATCH',
  /** The soft stop: SIGTERM at `timeout_ms`, SIGKILL this many ms later ({@link EXECUTOR_SOFT_STOP_MS}). */
  softStopMs: 'SANDFLEET_SOFT_STOP_MS',
  /** The largest file a job may write, MiB ({@link SANDBOX_MAX_FILE_MB}). */
  maxFileMb: 'SANDFLEET_MAX_FILE_MB',
  /** The processes a job may have (RLIMIT_NPROC); none when absent. */
  maxProcs: 'SANDFLEET_MAX_PROCS',
  /** The runner's isolation setting: at `reuse` each zygote takes its baseline ahead of the first job. */
  isolation: 'SANDFLEET_ISOLATION',
  /** A Unix socket the frames go over instead of stdin and stdout (docker's `socket` channel). */
  channel: 'SANDFLEET_CHANNEL',
  /** The runner's seccomp filter, base64, which the executor adds itself where the sandbox lacks it (docker). */
  seccomp: 'SANDFLEET_SECCOMP',
  /** `1`: the session host gives each session namespaces of its own. */
  sessionNamespaces: 'SANDFLEET_SESSION_NAMESPACES'
})

/** A variable of {@link SANDBOX_ENV}, by its key. */
export type SandboxEnvKey = keyof typeof SANDBOX_ENV

/** The directories of a sandbox a job may write in beside its work dir (process, docker), emptied after each job. */
export const SCRATCH_DIRS: readonly string[] = Object.freeze(['/tmp', '/mnt', '/dev/shm', '/dev/mqueue'])

/** What a driver says of its sandbox; the soft stop and the file-size cap are the runner's, the same for every one. */
export type SandboxEnvValues = Partial<Record<Exclude<SandboxEnvKey, 'softStopMs' | 'maxFileMb'>, string | number>>

/**
 * The variables of a sandbox whose driver says `values` (an undefined one left out), with the
 * runner's soft stop and file-size cap.
 */
export function sandboxEnv(values: SandboxEnvValues): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(values) as Array<[SandboxEnvKey, string | number | undefined]>) {
    if (value !== undefined) env[SANDBOX_ENV[key]] = String(value)
  }
  env[SANDBOX_ENV.softStopMs] = String(EXECUTOR_SOFT_STOP_MS)
  env[SANDBOX_ENV.maxFileMb] = String(SANDBOX_MAX_FILE_MB)
  return env
}

/** `env` as `NAME=value` lines, as Docker's container spec takes it. */
export function envLines(env: Readonly<Record<string, string>>): string[] {
  return Object.entries(env).map(([name, value]) => `${name}=${value}`)
}
