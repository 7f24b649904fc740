/**
 * A soak's health: what a long run of hostile and ordinary jobs leaves behind in the fleet's
 * processes. Sampled from /proc while the run goes (the runner's and the gateway's resident memory
 * and open descriptors, the runner's descendants and which of them are zombies), and measured at
 * rest before and after (the runner's sandbox processes, and with Docker its labelled
 * containers), so that a leak is a difference between two quiet moments, not a job in flight.
 */
import { execFile } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { promisify } from 'node:util'
import { descendants, parentOf, procStat, statusMiB } from '../proc-memory.ts'

/** One sample of the fleet's processes. */
export interface HealthSample {
  /** Seconds since the watch started. */
  tS: number
  /** Calls answered when it was taken. */
  done: number
  runnerRssMiB: number
  gatewayRssMiB: number
  runnerFds: number
  gatewayFds: number
  /** Live descendants of the runner (sandboxes, their executors, jobs in flight). */
  processes: number
  /** Descendants in state Z (exited, not reaped). */
  zombies: number
}

/** The fleet at rest: nothing in flight. */
export interface RestState {
  /** Live descendants of the runner (they vary as a sandbox's tiers warm). */
  processes: number
  /** Live children of the runner: one a sandbox (its session host, its pyodide host), however warm. */
  sandboxes: number
  /** Containers labelled with the runner's id (Docker backend), else 0. */
  containers: number
  zombies: number
}

/** A process seen as a zombie in every sample for a second or more: where it was and for how long. */
export interface LingeringZombie {
  pid: number
  /**
   * Command names from the runner's child down to the zombie, `bwrap>python3>python3>python3`: its depth says what it
   * was.
   */
  chain: string
  /** State of its parent when first seen lingering (`S`, `R`, `T` stopped, …). */
  parentState: string
  /** Seconds between the first and the last sample that saw it. */
  seenS: number
}

/**
 * The verdict of a soak, as figures thresholds may name. A growth figure is null when a window
 * held no sample (a run of too few calls): the report says so, and a threshold on it fails.
 */
export interface HealthFigures {
  /** Runner RSS, median of the run's last tenth over the median just after warm-up (its second tenth), in %. */
  rss_growth_pct: number | null
  /** The same for the gateway. */
  gateway_rss_growth_pct: number | null
  /** Runner open descriptors: the same two windows' medians, difference. */
  fd_growth: number | null
  /**
   * Processes left unreaped: seen as zombies for longer than any job of the run may last (its
   * longest `timeout_ms` and the runner's grace: a job's own children may wait for it that long),
   * or at rest after the run.
   */
  zombies: number
  /** Zombies seen in two samples a second apart or more, but reaped within that bound. */
  late_reaps: number
  /** Sandbox processes and containers at rest after the run less those at rest before it. */
  leaked_sandboxes: number
}

/** What the health section of a soak's report holds. */
export interface SoakHealth {
  figures: HealthFigures
  before: RestState
  after: RestState
  samples: HealthSample[]
  /** Every process seen as a zombie for a second or more while the run went (`zombies` and `late_reaps`). */
  lingering: LingeringZombie[]
}

// The runner's RUNNER_LABEL (backends/docker/docker-engine.ts): not imported, which would load the whole runner for a
// string.
const RUNNER_LABEL = 'org.sandfleet.runner'

function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length
  } catch {
    return NaN
  }
}

function zombiesAmong(pids: Iterable<number>): number[] {
  const out: number[] = []
  for (const pid of pids) if (procStat(pid)?.state === 'Z') out.push(pid)
  return out
}

/** Where zombie `pid` hangs below `root`: its chain of command names, and its parent's state. */
function placeOf(pid: number, root: number): { chain: string; parentState: string } {
  const names: string[] = []
  let parent: number | undefined
  for (let at = pid, hops = 0; at !== root && hops < 64; hops++) {
    const s = procStat(at)
    if (s === undefined) {
      names.push('?')
      break
    }
    names.push(s.comm)
    parent ??= s.ppid
    at = s.ppid
  }
  return {
    chain: names.reverse().join('>'),
    parentState: (parent === undefined ? undefined : procStat(parent)?.state) ?? '?'
  }
}

async function labelledContainers(runnerId: string | undefined): Promise<number> {
  if (runnerId === undefined) return 0
  const { stdout } = await promisify(execFile)('docker', ['ps', '-aq', '--filter', `label=${RUNNER_LABEL}=${runnerId}`])
  return stdout.split('\n').filter((l) => l.trim() !== '').length
}

/** The runner at rest; `runnerId` names its Docker containers (undefined: no Docker). */
export async function restState(runnerPid: number, runnerId?: string): Promise<RestState> {
  const tree = descendants(runnerPid)
  const dead = new Set(zombiesAmong(tree))
  const sandboxes = [...tree].filter((pid) => !dead.has(pid) && parentOf(pid) === runnerPid).length
  return {
    processes: tree.size - dead.size,
    sandboxes,
    containers: await labelledContainers(runnerId),
    zombies: dead.size
  }
}

/**
 * The runner at rest once its sandboxes have finished starting (a runner is ready before every
 * zygote of every sandbox has forked): the state once it has not changed for `quietMs`.
 */
export async function steadyState(
  runnerPid: number,
  runnerId: string | undefined,
  quietMs = 3000,
  maxMs = 60_000
): Promise<RestState> {
  const until = performance.now() + maxMs
  let state = await restState(runnerPid, runnerId)
  let since = performance.now()
  while (performance.now() < until && performance.now() - since < quietMs) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const next = await restState(runnerPid, runnerId)
    if (
      next.processes !== state.processes ||
      next.sandboxes !== state.sandboxes ||
      next.containers !== state.containers ||
      next.zombies !== state.zombies
    )
      since = performance.now()
    state = next
  }
  return state
}

/**
 * Waits until the runner's sandboxes are back to `target` (its pool refills after the run's last
 * replacements, the retired ones are gone), up to `maxMs`; answers the last state seen.
 */
export async function settleTo(
  target: RestState,
  runnerPid: number,
  runnerId: string | undefined,
  maxMs = 60_000
): Promise<RestState> {
  const until = performance.now() + maxMs
  let state = await restState(runnerPid, runnerId)
  while (
    performance.now() < until &&
    (state.sandboxes !== target.sandboxes || state.containers !== target.containers || state.zombies > 0)
  ) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    state = await restState(runnerPid, runnerId)
  }
  return state
}

/**
 * Samples taken by progress in a run of any length: one each time another `calls / SAMPLES_BY_PROGRESS`
 * calls are answered, so each tenth of the run holds five whatever the machine's speed.
 */
export const SAMPLES_BY_PROGRESS = 50

/** A zombie seen this long (in every sample between) lingers: reaped late, or left unreaped. */
const LINGER_S = 1

/** What {@link watchHealth} answers: `answered` is told each answer, `stop` ends the watch. */
export interface HealthWatch {
  /** Called with the count of calls answered after each answer; samples at each step of progress. */
  answered: (done: number) => void
  stop: () => { samples: HealthSample[]; lingering: LingeringZombie[] }
}

/**
 * Samples the fleet's processes every `everyMs` (zombies are told apart by time) and at each
 * `calls / SAMPLES_BY_PROGRESS` calls answered (the growth windows are by calls) until stopped.
 */
export function watchHealth(runnerPid: number, gatewayPid: number, calls: number, everyMs = 1000): HealthWatch {
  const step = Math.max(1, Math.ceil(calls / SAMPLES_BY_PROGRESS))
  let done = 0
  let nextStep = step
  const start = performance.now()
  const samples: HealthSample[] = []
  // A pid is reused only after it is reaped, so a pid in state Z in every sample between two is one zombie.
  const lingering = new Map<number, LingeringZombie>()
  let lastZombies = new Map<number, number>() // pid → time first seen, of the last sample's zombies
  const take = (): void => {
    const tS = (performance.now() - start) / 1000
    const tree = descendants(runnerPid)
    const zombies = zombiesAmong(tree)
    const seen = new Map<number, number>()
    for (const z of zombies) {
      const since = lastZombies.get(z)
      seen.set(z, since ?? tS)
      if (since === undefined || tS - since < LINGER_S) continue
      const known = lingering.get(z)
      if (known !== undefined) known.seenS = tS - since
      else lingering.set(z, { pid: z, ...placeOf(z, runnerPid), seenS: tS - since })
    }
    lastZombies = seen
    samples.push({
      tS,
      done,
      runnerRssMiB: statusMiB(runnerPid, 'VmRSS') ?? NaN,
      gatewayRssMiB: statusMiB(gatewayPid, 'VmRSS') ?? NaN,
      runnerFds: fdCount(runnerPid),
      gatewayFds: fdCount(gatewayPid),
      processes: tree.size - zombies.length,
      zombies: zombies.length
    })
  }
  take()
  const timer = setInterval(take, everyMs)
  return {
    answered: (n) => {
      done = n
      if (n < nextStep) return
      nextStep = (Math.floor(n / step) + 1) * step
      take()
    },
    stop: () => {
      clearInterval(timer)
      take()
      return { samples, lingering: [...lingering.values()] }
    }
  }
}

/** The median of the finite `xs`; null when there is none. */
function median(xs: readonly number[]): number | null {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b)
  return s.length === 0 ? null : s[Math.floor(s.length / 2)]
}

/**
 * The figures of a soak of `calls` calls: growth between the window just after warm-up (calls
 * answered in the run's second tenth) and the last tenth, zombies and leaked sandboxes.
 * `leftAfterS`: how long a zombie may wait for its reaper (the longest job's deadline and grace).
 */
export function healthFigures(
  samples: readonly HealthSample[],
  calls: number,
  lingering: readonly LingeringZombie[],
  leftAfterS: number,
  before: RestState,
  after: RestState
): HealthFigures {
  const window = (lo: number, hi: number): HealthSample[] =>
    samples.filter((s) => s.done >= lo * calls && s.done < hi * calls)
  const early = window(0.1, 0.2)
  const late = window(0.9, 1)
  const medians = (pick: (s: HealthSample) => number): [number, number] | null => {
    const a = median(early.map(pick))
    const b = median(late.map(pick))
    return a === null || b === null ? null : [a, b]
  }
  const growthPct = (pick: (s: HealthSample) => number): number | null => {
    const m = medians(pick)
    return m === null ? null : ((m[1] - m[0]) / m[0]) * 100
  }
  const fds = medians((s) => s.runnerFds)
  return {
    rss_growth_pct: growthPct((s) => s.runnerRssMiB),
    gateway_rss_growth_pct: growthPct((s) => s.gatewayRssMiB),
    fd_growth: fds === null ? null : fds[1] - fds[0],
    zombies: lingering.filter((z) => z.seenS > leftAfterS).length + after.zombies,
    late_reaps: lingering.filter((z) => z.seenS <= leftAfterS).length,
    // Counted by sandbox, not by process: a sandbox's process count moves as its tiers warm, which
    // may take longer than any quiet spell on a slow machine.
    leaked_sandboxes: after.sandboxes - before.sandboxes + (after.containers - before.containers)
  }
}
