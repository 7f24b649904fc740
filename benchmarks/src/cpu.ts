/**
 * CPU accounting over a load run's recorded window: the whole machine's from /proc/stat (user,
 * kernel, idle; 100 % is every core busy), the load generator's own (this process), since it
 * shares the cores with the fleet it measures, and the fleet's: the CPU time of the server's
 * whole process tree (sandboxes and the jobs they forked included), which other work on a shared
 * machine does not inflate.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

/** Machine and harness CPU over a window, in percent of all cores. */
export interface CpuShare {
  /** Whole machine, busy (user + kernel); undefined where /proc/stat is unreadable. */
  machineBusyPct: number | undefined
  /** Whole machine, in user mode. */
  machineUserPct: number | undefined
  /** Whole machine, in the kernel (system, irq, softirq). */
  machineKernelPct: number | undefined
  /** The load generator (this process). */
  harnessPct: number
  /** CPU ms the server's process tree used in the window, user and kernel; undefined without a pid or /proc. */
  serverUserMs: number | undefined
  serverKernelMs: number | undefined
  /** Of the server's CPU, the ms of its root process alone (for sandfleet: gateway + runner in node). */
  serverRootMs: number | undefined
  /**
   * Of the root process's CPU, the ms of its main thread (for sandfleet: the event loop, where
   * HTTP, the gateway and the runner run); the rest of the root's is its other threads' (V8 and
   * libuv helpers, and the isolates of the javascript and pyodide backends).
   */
  serverMainThreadMs: number | undefined
  /**
   * Of the server's CPU, the ms of processes that exited and were reaped inside the tree: for
   * sandfleet mostly the jobs (forked and reaped by the executors), for the naive server every
   * `python3 -c`. The rest is the live processes' own time (node, bubblewrap, executors).
   */
  serverReapedMs: number | undefined
}

let clockTicks: number | undefined
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      clockTicks = 100
    }
  }
  return clockTicks
}

/**
 * CPU of `pid` and every descendant, in ms: each live process's own time plus the time of the
 * children it has reaped (utime, stime, cutime, cstime of /proc/PID/stat). A job forked and
 * reaped by a sandbox shows in the sandbox's reaped time; a retired sandbox in the server's.
 */
export function treeCpuMs(
  pid: number
): { userMs: number; kernelMs: number; rootMs: number; mainThreadMs: number; reapedMs: number } | undefined {
  const parent = new Map<number, number>()
  const times = new Map<number, [number, number]>()
  const own = new Map<number, number>()
  const reaped = new Map<number, number>()
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return undefined
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    parent.set(Number(name), Number(f[1]))
    times.set(Number(name), [Number(f[11]) + Number(f[13]), Number(f[12]) + Number(f[14])])
    own.set(Number(name), Number(f[11]) + Number(f[12]))
    reaped.set(Number(name), Number(f[13]) + Number(f[14]))
  }
  if (!times.has(pid)) return undefined
  let mainThreadTicks = 0
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    mainThreadTicks = Number(f[11]) + Number(f[12])
  } catch {}
  const children = new Map<number, number[]>()
  for (const [p, pp] of parent) children.set(pp, [...(children.get(pp) ?? []), p])
  let user = 0
  let kernel = 0
  let reapedTicks = 0
  const todo = [pid]
  for (let p = todo.pop(); p !== undefined; p = todo.pop()) {
    const t = times.get(p)
    if (t !== undefined) {
      user += t[0]
      kernel += t[1]
    }
    reapedTicks += reaped.get(p) ?? 0
    todo.push(...(children.get(p) ?? []))
  }
  const ms = 1000 / ticksPerSecond()
  return {
    userMs: user * ms,
    kernelMs: kernel * ms,
    rootMs: (own.get(pid) ?? 0) * ms,
    mainThreadMs: mainThreadTicks * ms,
    reapedMs: reapedTicks * ms
  }
}

interface Ticks {
  user: number
  kernel: number
  total: number
}

function machineTicks(): Ticks | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
    const f = line.trim().split(/\s+/).slice(1).map(Number)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f
    return {
      user: user + nice,
      kernel: system + irq + softirq,
      total: user + nice + system + idle + iowait + irq + softirq + steal
    }
  } catch {
    return undefined
  }
}

/** A started measurement; `stop()` returns the shares since `start`. */
export interface CpuMeter {
  stop(): CpuShare
}

/** Starts measuring now; with `serverPid`, that process tree's CPU too. */
export function startCpuMeter(serverPid?: number): CpuMeter {
  const s0 = serverPid === undefined ? undefined : treeCpuMs(serverPid)
  const t0 = performance.now()
  const m0 = machineTicks()
  const p0 = process.cpuUsage()
  return {
    stop(): CpuShare {
      const wallUs = (performance.now() - t0) * 1000
      const p = process.cpuUsage(p0)
      const m1 = machineTicks()
      const s1 = serverPid === undefined ? undefined : treeCpuMs(serverPid)
      const server =
        s0 === undefined || s1 === undefined
          ? {
              serverUserMs: undefined,
              serverKernelMs: undefined,
              serverRootMs: undefined,
              serverMainThreadMs: undefined,
              serverReapedMs: undefined
            }
          : {
              serverUserMs: Math.round(s1.userMs - s0.userMs),
              serverKernelMs: Math.round(s1.kernelMs - s0.kernelMs),
              serverRootMs: Math.round(s1.rootMs - s0.rootMs),
              serverMainThreadMs: Math.round(s1.mainThreadMs - s0.mainThreadMs),
              serverReapedMs: Math.round(s1.reapedMs - s0.reapedMs)
            }
      const pct = (x: number, of: number): number => Math.round((x / of) * 1000) / 10
      const harnessPct = wallUs > 0 ? pct(p.user + p.system, wallUs * availableParallelism()) : 0
      if (m0 === undefined || m1 === undefined || m1.total === m0.total)
        return {
          machineBusyPct: undefined,
          machineUserPct: undefined,
          machineKernelPct: undefined,
          harnessPct,
          ...server
        }
      const total = m1.total - m0.total
      const user = m1.user - m0.user
      const kernel = m1.kernel - m0.kernel
      return {
        machineBusyPct: pct(user + kernel, total),
        machineUserPct: pct(user, total),
        machineKernelPct: pct(kernel, total),
        harnessPct,
        ...server
      }
    }
  }
}

/**
 * Waits until a fleet that just started is idle: its process tree under `idlePct` % of one core
 * and (`machineToo`) the whole machine under 4 × that of all cores, over a half-second window (its
 * executors warm their tiers in the background; a docker fleet's containers are not in its tree),
 * or `maxMs` passed. Returns the ms it waited.
 */
export async function settle(pid: number, maxMs = 60_000, idlePct = 5, machineToo = true): Promise<number> {
  const t0 = performance.now()
  let tree = treeCpuMs(pid)
  let machine = machineTicks()
  while (tree !== undefined && performance.now() - t0 < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    const treeNow = treeCpuMs(pid)
    const machineNow = machineTicks()
    if (treeNow === undefined) break
    const treeIdle = ((treeNow.userMs + treeNow.kernelMs - tree.userMs - tree.kernelMs) / 500) * 100 < idlePct
    const machineIdle =
      !machineToo ||
      machine === undefined ||
      machineNow === undefined ||
      machineNow.total === machine.total ||
      ((machineNow.user + machineNow.kernel - machine.user - machine.kernel) / (machineNow.total - machine.total)) *
        100 <
        4 * idlePct
    if (treeIdle && machineIdle) break
    tree = treeNow
    machine = machineNow
  }
  return Math.round(performance.now() - t0)
}
