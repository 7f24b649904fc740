/**
 * All the CPU a fleet used over a window: the process trees the harness started (each live
 * process's user + system time and that of the children it reaped, cpu.ts's `treeCpuMs`: gateway,
 * runner, bubblewrap sandboxes, executors, zygotes, the jobs and every replacement), and, on the
 * docker backend, its runners' containers, which live outside those trees: each container's
 * cgroup CPU (cgroup v1 `cpuacct.usage`, v2 `cpu.stat` `usage_usec`), found among the engine's
 * cgroups and kept when the engine says it carries the runner's label. Containers are sampled
 * every `sampleMs`; one removed between two samples loses what it used since the last (a
 * retired container's last fraction of a second). The engine's own processes (dockerd,
 * containerd, the shims) are not counted: they serve every container of the host.
 */
import { execFile, execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { treeCpuMs } from './cpu.ts'

const run = promisify(execFile)

/**
 * The docker driver's label naming the runner a container belongs to (RUNNER_LABEL of docker-engine.ts, not imported:
 * that would load the runner).
 */
const RUNNER_LABEL = 'org.sandfleet.runner'

/** The fleet's CPU over a window, ms. */
export interface FleetCpuUsed {
  /** The process trees'. */
  processesMs: number
  /** The runners' containers' (docker). */
  containersMs?: number
  /** Both. */
  totalMs: number
}

/** A started measurement; `stop()` gives the CPU used since it started. */
export interface FleetCpuMeter {
  stop(): Promise<FleetCpuUsed>
}

/**
 * What to measure: the harness's processes (each the root of a tree) and, for docker, the runners whose containers
 * count.
 */
export interface FleetCpuTarget {
  pids: readonly number[]
  /** Runner ids whose labelled containers are the fleet's (docker); empty or absent: none. */
  containersOf?: readonly string[]
  /** How often containers are sampled, ms (default 250). */
  sampleMs?: number
}

function treesMs(pids: readonly number[]): number {
  let ms = 0
  for (const pid of pids) {
    const t = treeCpuMs(pid)
    if (t !== undefined) ms += t.userMs + t.kernelMs
  }
  return ms
}

/** Where the engine's containers' cgroups are, and how to read one's CPU in ns. */
const LAYOUTS: ReadonlyArray<{
  dir: string
  id: (entry: string) => string | undefined
  usageNs: (dir: string, entry: string) => number
}> = [
  {
    dir: '/sys/fs/cgroup/cpuacct/docker',
    id: (e) => (/^[0-9a-f]{64}$/.test(e) ? e : undefined),
    usageNs: (dir, e) => Number(readFileSync(`${dir}/${e}/cpuacct.usage`, 'utf8'))
  },
  {
    dir: '/sys/fs/cgroup/cpu,cpuacct/docker',
    id: (e) => (/^[0-9a-f]{64}$/.test(e) ? e : undefined),
    usageNs: (dir, e) => Number(readFileSync(`${dir}/${e}/cpuacct.usage`, 'utf8'))
  },
  {
    dir: '/sys/fs/cgroup/system.slice',
    id: (e) => /^docker-([0-9a-f]{64})\.scope$/.exec(e)?.[1],
    usageNs: (dir, e) => v2UsageNs(`${dir}/${e}`)
  },
  {
    dir: '/sys/fs/cgroup/docker',
    id: (e) => (/^[0-9a-f]{64}$/.test(e) ? e : undefined),
    usageNs: (dir, e) => v2UsageNs(`${dir}/${e}`)
  }
]

function v2UsageNs(dir: string): number {
  const m = /^usage_usec (\d+)$/m.exec(readFileSync(`${dir}/cpu.stat`, 'utf8'))
  if (m === null) throw new Error('no usage_usec')
  return Number(m[1]) * 1000
}

/** The engine's containers' cgroups now: id → CPU ns. */
function containerUsage(): Map<string, number> {
  const out = new Map<string, number>()
  for (const layout of LAYOUTS) {
    let entries: string[]
    try {
      entries = readdirSync(layout.dir)
    } catch {
      continue
    }
    for (const entry of entries) {
      const id = layout.id(entry)
      if (id === undefined) continue
      try {
        out.set(id, layout.usageNs(layout.dir, entry))
      } catch {}
    }
  }
  return out
}

/** The runner label of each container id, as the engine says (`''`: none, or gone). */
function labelsSync(ids: readonly string[]): Map<string, string> {
  const out = new Map<string, string>()
  if (ids.length === 0) return out
  try {
    const text = execFileSync(
      'docker',
      ['inspect', '-f', `{{.Id}} {{index .Config.Labels "${RUNNER_LABEL}"}}`, ...ids],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }
    )
    for (const line of text.split('\n')) {
      const [id, label = ''] = line.split(' ')
      if (id !== undefined && id !== '') out.set(id, label)
    }
  } catch {}
  return out
}

async function labelOf(id: string): Promise<string> {
  try {
    const { stdout } = await run('docker', ['inspect', '-f', `{{index .Config.Labels "${RUNNER_LABEL}"}}`, id])
    return stdout.trim()
  } catch {
    return ''
  }
}

/** Starts measuring `target` now. */
export function startFleetCpuMeter(target: FleetCpuTarget): FleetCpuMeter {
  const p0 = treesMs(target.pids)
  const runners = new Set(target.containersOf ?? [])
  if (runners.size === 0)
    return {
      stop: async () => {
        const processesMs = treesMs(target.pids) - p0
        return { processesMs, totalMs: processesMs }
      }
    }
  // A container's first reading and its last: one there at the start counts from its reading then,
  // one made later from zero (its whole life is in the window).
  const first = new Map<string, number>()
  const last = new Map<string, number>()
  const ours = new Map<string, boolean>()
  const start = containerUsage()
  for (const [id, label] of labelsSync([...start.keys()])) ours.set(id, runners.has(label))
  for (const [id, ns] of start)
    if (ours.get(id) === true) {
      first.set(id, ns)
      last.set(id, ns)
    }
  const asking = new Set<string>()
  const sample = (): void => {
    for (const [id, ns] of containerUsage()) {
      const known = ours.get(id)
      if (known === true) {
        if (!first.has(id)) first.set(id, start.has(id) ? (start.get(id) as number) : 0)
        last.set(id, ns)
      } else if (known === undefined && !asking.has(id)) {
        asking.add(id)
        void labelOf(id).then((label) => {
          ours.set(id, runners.has(label))
          asking.delete(id)
        })
      }
    }
  }
  const timer = setInterval(sample, target.sampleMs ?? 250)
  return {
    stop: async () => {
      clearInterval(timer)
      while (asking.size > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      sample()
      const processesMs = treesMs(target.pids) - p0
      let ns = 0
      for (const [id, to] of last) ns += to - (first.get(id) ?? 0)
      const containersMs = ns / 1e6
      return { processesMs, containersMs, totalMs: processesMs + containersMs }
    }
  }
}
