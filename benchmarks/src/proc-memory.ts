/**
 * Memory of processes from /proc: the descendants of a process (by the ppid of /proc/PID/stat)
 * and, for each, its proportional set size (`Pss`) and private pages (`Private_Clean +
 * Private_Dirty`) from /proc/PID/smaps_rollup. Reading another user's smaps_rollup needs root or
 * the same uid; an unreadable process counts 0 and is counted in `unreadable`.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Every live descendant of `root` (not `root` itself); empty without /proc. */
export function descendants(root: number): Set<number> {
  const children = new Map<number, number[]>()
  let names: string[]
  try {
    names = readdirSync('/proc')
  } catch {
    return new Set()
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name (field 2) is in parentheses and may hold spaces: read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      const list = children.get(ppid) ?? []
      list.push(Number(name))
      children.set(ppid, list)
    } catch {
      /* exited while listing */
    }
  }
  const out = new Set<number>()
  const stack = [root]
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() as number) ?? []) {
      if (!out.has(child)) {
        out.add(child)
        stack.push(child)
      }
    }
  }
  return out
}

/** Memory of a set of processes, in KiB. */
export interface ProcMemory {
  processes: number
  pssKiB: number
  privateKiB: number
  rssKiB: number
  /** Processes whose smaps_rollup could not be read (exited, or not permitted). */
  unreadable: number
}

/** Sums Pss, private pages and Rss over `pids`. */
export function memoryOf(pids: Iterable<number>): ProcMemory {
  const m: ProcMemory = { processes: 0, pssKiB: 0, privateKiB: 0, rssKiB: 0, unreadable: 0 }
  for (const pid of pids) {
    m.processes++
    let text: string
    try {
      text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    } catch {
      m.unreadable++
      continue
    }
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0)
    m.pssKiB += field('Pss')
    m.rssKiB += field('Rss')
    m.privateKiB += field('Private_Clean') + field('Private_Dirty')
  }
  return m
}

/**
 * A size line of /proc/PID/status (`VmRSS`, the resident set; `VmHWM`, its peak), MiB; undefined when the process is
 * gone.
 */
export function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? undefined : Number(m[1]) / 1024
  } catch {
    return undefined
  }
}

/** The command name, state (`R`, `S`, `Z`, …) and parent of `pid`, from /proc/PID/stat; undefined when it is gone. */
export function procStat(pid: number): { comm: string; state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces: read after the last ')'.
    const close = stat.lastIndexOf(')')
    const [state, ppid] = stat.slice(close + 2).split(' ')
    return { comm: stat.slice(stat.indexOf('(') + 1, close), state, ppid: Number(ppid) }
  } catch {
    return undefined
  }
}

/** The parent of `pid` (from /proc/PID/stat), or undefined when it is gone. */
export function parentOf(pid: number): number | undefined {
  return procStat(pid)?.ppid
}

/** The command line of `pid` (NUL-separated arguments joined by spaces), or ''. */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
  } catch {
    return ''
  }
}
