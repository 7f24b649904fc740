/**
 * What every sandfleet process exports once, whatever its role: `sandfleet_build_info` (always 1;
 * the build in its labels) and prom-client's default process and Node.js metrics, named with the
 * `sandfleet_` prefix like every other sandfleet series (`sandfleet_process_cpu_seconds_total`,
 * `sandfleet_nodejs_eventloop_lag_seconds`, …). A process registers them in one registry only:
 * `sandfleet serve` (a gateway and a runner in one process) registers them in the gateway's.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join } from 'node:path'
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client'

/** The prefix of prom-client's default metrics in sandfleet. */
export const PROCESS_METRICS_PREFIX = 'sandfleet_'

/** What `sandfleet_build_info` says. */
export interface BuildInfo {
  /**
   * The role of the process: `gateway`, `runner`, `serve`. (Not `service`: the Prometheus
   * Operator gives every target a `service` label, which would rename this one.)
   */
  component: string
  /** The package version. */
  version: string
  /** The git commit (see {@link buildCommit}); `unknown` when empty. */
  commit?: string
}

/** Registers `sandfleet_build_info` and the default process/Node.js metrics in `registry`. */
export function registerProcessMetrics(registry: Registry, info: BuildInfo): void {
  const commit = info.commit === undefined || info.commit === '' ? 'unknown' : info.commit
  new Gauge({
    name: 'sandfleet_build_info',
    help: 'Always 1; the build of this process in its labels (component, version, commit, node_version)',
    labelNames: ['component', 'version', 'commit', 'node_version'] as const,
    registers: [registry]
  }).set({ component: info.component, version: info.version, commit, node_version: process.version }, 1)
  collectDefaultMetrics({ register: registry, prefix: PROCESS_METRICS_PREFIX })
}

/**
 * The commit this code was built from: `SANDFLEET_COMMIT` (the fleet image sets it at build
 * time), else the HEAD of the git checkout holding `from` (a file or directory), else ''.
 * Reads the repository's files; never runs git.
 */
export function buildCommit(from: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env.SANDFLEET_COMMIT?.trim() ?? ''
  if (given !== '') return given
  try {
    let dir = from
    for (;;) {
      const dotGit = join(dir, '.git')
      if (existsSync(dotGit)) return headOf(dotGit)
      const parent = dirname(dir)
      if (parent === dir) return ''
      dir = parent
    }
  } catch {
    return ''
  }
}

/** The commit HEAD names in the repository at `dotGit` (a directory, or a worktree's `gitdir:` file). */
function headOf(dotGit: string): string {
  let gitDir = dotGit
  if (!statSync(dotGit).isDirectory()) {
    const pointer = /^gitdir: (.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim()
    if (pointer === undefined) return ''
    gitDir = isAbsolute(pointer) ? pointer : join(dirname(dotGit), pointer)
  }
  const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim()
  const ref = /^ref: (.+)$/.exec(head)?.[1]
  if (ref === undefined) return /^[0-9a-f]{40}$/.test(head) ? head : ''
  // A worktree keeps its HEAD; branches live in the common directory.
  const common = existsSync(join(gitDir, 'commondir'))
    ? join(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
    : gitDir
  for (const base of [gitDir, common]) {
    const file = join(base, ref)
    if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  }
  const packed = join(common, 'packed-refs')
  if (!existsSync(packed)) return ''
  for (const line of readFileSync(packed, 'utf8').split('\n')) {
    const [sha, name] = line.split(' ')
    if (name === ref && /^[0-9a-f]{40}$/.test(sha)) return sha
  }
  return ''
}
