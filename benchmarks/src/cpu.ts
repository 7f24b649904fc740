/**
 * CPU accounting over a load run's recorded window: the whole machine's from /proc/stat (user,
 * kernel, idle; 100 % is every core busy), and the load generator's own (this process), since it
 * shares the cores with the fleet it measures.
 */
import { readFileSync } from 'node:fs'
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
}

interface Ticks { user: number, kernel: number, total: number }

function machineTicks (): Ticks | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]
    const f = line.trim().split(/\s+/).slice(1).map(Number)
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f
    return { user: user + nice, kernel: system + irq + softirq, total: user + nice + system + idle + iowait + irq + softirq + steal }
  } catch {
    return undefined
  }
}

/** A started measurement; `stop()` returns the shares since `start`. */
export interface CpuMeter { stop(): CpuShare }

/** Starts measuring now. */
export function startCpuMeter (): CpuMeter {
  const t0 = performance.now()
  const m0 = machineTicks()
  const p0 = process.cpuUsage()
  return {
    stop (): CpuShare {
      const wallUs = (performance.now() - t0) * 1000
      const p = process.cpuUsage(p0)
      const m1 = machineTicks()
      const pct = (x: number, of: number): number => Math.round(x / of * 1000) / 10
      const harnessPct = wallUs > 0 ? pct(p.user + p.system, wallUs * availableParallelism()) : 0
      if (m0 === undefined || m1 === undefined || m1.total === m0.total) return { machineBusyPct: undefined, machineUserPct: undefined, machineKernelPct: undefined, harnessPct }
      const total = m1.total - m0.total
      const user = m1.user - m0.user
      const kernel = m1.kernel - m0.kernel
      return { machineBusyPct: pct(user + kernel, total), machineUserPct: pct(user, total), machineKernelPct: pct(kernel, total), harnessPct }
    }
  }
}
