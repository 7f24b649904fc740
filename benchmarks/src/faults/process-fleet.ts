/**
 * A fleet to break on purpose: `sandfleet runner` and `sandfleet gateway` processes of this
 * checkout, some runners each in a network namespace of their own behind a veth pair (the link a
 * partition cuts), and the faults of issue 44's table done to them:
 *
 * - {@link FaultFleet.pause}: every process of a runner stopped (SIGSTOP, its sandboxes too: what
 *   `docker pause` does to a runner's container), then {@link FaultFleet.resume}d (SIGCONT);
 * - {@link FaultFleet.cut}: the runner's namespace drops every packet (iptables in that namespace
 *   only), then {@link FaultFleet.heal}ed;
 * - {@link FaultFleet.kill}: every process of a runner killed (SIGKILL: `docker kill`), and
 *   {@link FaultFleet.killGateway}: a gateway killed.
 *
 * Namespaces and links need root (`ip`, `iptables`); {@link faultFleetProblem} says what is
 * missing. Everything is named after the fleet (`name`, short) and released by `close()`, also
 * after a failure; nothing outside the namespaces it made is touched.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const BIN = fileURLToPath(new URL('../../../bin/sandfleet.mjs', import.meta.url))
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

/** Options of {@link startFaultFleet}. */
export interface FaultFleetOptions {
  /** Short name (letters and digits, at most 6): the namespaces, links and runner ids carry it. */
  name: string
  runners: number
  gateways: number
  /** Indices of the runners that run in a namespace of their own (the ones a partition can cut). */
  isolated?: readonly number[]
  /** Third octet of the 10.244.X.0/24 the links take (one per fleet; default from the process id). */
  subnet?: number
  runnerArgs?: readonly string[]
  gatewayArgs?: readonly string[]
  /** Longest a process may take to start, ms. */
  startTimeoutMs?: number
}

/** One process of the fleet. */
export interface FleetProcess {
  /** Its id in the fleet's answers (a runner's `--id`), or `gateway-N`. */
  id: string
  url: string
  child: ChildProcess
  /** The namespace it runs in, if it has one of its own. */
  netns?: string
}

/** What is missing on this machine for a fault fleet, or undefined when it can run. */
export async function faultFleetProblem(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'network namespaces and iptables need root'
  for (const tool of ['ip', 'iptables', 'bwrap']) {
    try {
      await run('sh', ['-c', `command -v ${tool}`])
    } catch {
      return `${tool} is not installed`
    }
  }
  return undefined
}

/** Every process below `pid`, `pid` first (read from /proc once). */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const list = children.get(ppid) ?? []
    list.push(Number(entry))
    children.set(ppid, list)
  }
  const tree: number[] = []
  const walk = (p: number): void => {
    tree.push(p)
    for (const c of children.get(p) ?? []) walk(c)
  }
  walk(pid)
  return tree
}

function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {
      // gone already
    }
  }
}

/** Reads JSON log lines of `child` until one names its URL (`msg` starting `prefix`). */
function urlOf(child: ChildProcess, prefix: string, what: string, timeoutMs: number): Promise<string> {
  let output = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-4096)
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms: ${output}`)), timeoutMs)
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      output = (output + line + '\n').slice(-4096)
      let obj: { msg?: unknown; url?: unknown }
      try {
        obj = JSON.parse(line) as typeof obj
      } catch {
        return
      }
      if (typeof obj.msg === 'string' && obj.msg.startsWith(prefix) && typeof obj.url === 'string') {
        clearTimeout(timer)
        resolve(obj.url)
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${what} exited (${signal ?? code}) before it served: ${output}`))
    })
  })
}

/** The fleet; see the module comment. */
export class FaultFleet {
  readonly runners: FleetProcess[] = []
  readonly gateways: FleetProcess[] = []
  readonly #namespaces: string[] = []
  readonly #links: string[] = []
  readonly #paused = new Map<string, number[]>()
  #closed = false

  private constructor(readonly options: FaultFleetOptions) {}

  /** Starts the runners (the isolated ones in their namespaces), then the gateways in front of them. */
  static async start(options: FaultFleetOptions): Promise<FaultFleet> {
    const fleet = new FaultFleet(options)
    try {
      await fleet.#start()
      return fleet
    } catch (err) {
      await fleet.close()
      throw err
    }
  }

  async #start(): Promise<void> {
    const o = this.options
    const timeoutMs = o.startTimeoutMs ?? 180_000
    const subnet = o.subnet ?? 100 + (process.pid % 150)
    const isolated = new Set(o.isolated ?? [])
    await Promise.all(
      Array.from({ length: o.runners }, async (_, i) => {
        const id = `${o.name}-r${i + 1}`
        let host = '127.0.0.1'
        let prefix: string[] = []
        let netns: string | undefined
        if (isolated.has(i)) {
          netns = `${o.name}-ns${i + 1}`
          host = await this.#namespace(netns, `${o.name}v${i + 1}`, subnet, i)
          prefix = ['ip', 'netns', 'exec', netns]
        }
        const argv = [
          ...prefix,
          process.execPath,
          '--no-node-snapshot',
          BIN,
          'runner',
          '--host',
          host,
          '--port',
          '0',
          '--id',
          id,
          ...(o.runnerArgs ?? [])
        ]
        const child = spawn(argv[0] as string, argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
        const runner: FleetProcess = { id, url: '', child, ...(netns === undefined ? {} : { netns }) }
        this.runners.push(runner)
        runner.url = await urlOf(child, 'runner listening', `runner ${id}`, timeoutMs)
      })
    )
    this.runners.sort((a, b) => a.id.localeCompare(b.id))
    const urls = this.runners.map((r) => r.url).join(',')
    for (let g = 0; g < o.gateways; g++) {
      const args = ['--host', '127.0.0.1', '--port', '0', '--runners', urls, ...(o.gatewayArgs ?? [])]
      const child = spawn(process.execPath, ['--no-node-snapshot', BIN, 'gateway', ...args], {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe']
      })
      const gateway: FleetProcess = { id: `gateway-${g + 1}`, url: '', child }
      this.gateways.push(gateway)
      gateway.url = await urlOf(child, 'sandfleet gateway serving', gateway.id, timeoutMs)
    }
  }

  /** Makes namespace `netns` with a veth pair to it (`link`a here, `link`b there); resolves with its address. */
  async #namespace(netns: string, link: string, subnet: number, index: number): Promise<string> {
    const here = `10.244.${subnet}.${index * 4 + 1}`
    const there = `10.244.${subnet}.${index * 4 + 2}`
    await run('ip', ['netns', 'add', netns])
    this.#namespaces.push(netns)
    await run('ip', ['link', 'add', `${link}a`, 'type', 'veth', 'peer', 'name', `${link}b`])
    this.#links.push(`${link}a`)
    const inside = async (...args: string[]): Promise<unknown> => await run('ip', ['netns', 'exec', netns, ...args])
    await run('ip', ['link', 'set', `${link}b`, 'netns', netns])
    await run('ip', ['addr', 'add', `${here}/30`, 'dev', `${link}a`])
    await run('ip', ['link', 'set', `${link}a`, 'up'])
    await inside('ip', 'addr', 'add', `${there}/30`, 'dev', `${link}b`)
    await inside('ip', 'link', 'set', `${link}b`, 'up')
    await inside('ip', 'link', 'set', 'lo', 'up')
    return there
  }

  #runner(id: string): FleetProcess {
    const runner = this.runners.find((r) => r.id === id)
    if (runner === undefined) throw new Error(`no runner ${id} in this fleet`)
    return runner
  }

  /** Stops every process of runner `id` (SIGSTOP), as `docker pause` freezes its container. */
  pause(id: string): void {
    const pid = this.#runner(id).child.pid
    if (pid === undefined) return
    const tree = processTree(pid)
    signalAll(tree, 'SIGSTOP')
    this.#paused.set(id, tree)
  }

  /** Lets runner `id`'s processes go on (SIGCONT). */
  resume(id: string): void {
    signalAll([...(this.#paused.get(id) ?? [])].reverse(), 'SIGCONT')
    this.#paused.delete(id)
  }

  /** Drops every packet in and out of runner `id`'s namespace. */
  async cut(id: string): Promise<void> {
    const netns = this.#runner(id).netns
    if (netns === undefined) throw new Error(`runner ${id} has no namespace of its own to cut`)
    for (const chain of ['INPUT', 'OUTPUT'])
      await run('ip', ['netns', 'exec', netns, 'iptables', '-I', chain, '-j', 'DROP'])
  }

  /** Lets packets through runner `id`'s namespace again. */
  async heal(id: string): Promise<void> {
    const netns = this.#runner(id).netns
    if (netns === undefined) return
    for (const chain of ['INPUT', 'OUTPUT'])
      await run('ip', ['netns', 'exec', netns, 'iptables', '-D', chain, '-j', 'DROP']).catch(() => {})
  }

  /** Kills every process of runner `id` (SIGKILL), as `docker kill` does. */
  kill(id: string): void {
    const pid = this.#runner(id).child.pid
    if (pid !== undefined) signalAll(processTree(pid), 'SIGKILL')
  }

  /** Kills gateway `id` (SIGKILL): its calls in flight get no answer. */
  killGateway(id: string): void {
    const gateway = this.gateways.find((g) => g.id === id)
    if (gateway?.child.pid !== undefined) signalAll([gateway.child.pid], 'SIGKILL')
  }

  /** Stops every process, removes the namespaces and links. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const id of [...this.#paused.keys()]) this.resume(id)
    for (const runner of this.runners) await this.heal(runner.id).catch(() => {})
    const processes = [...this.gateways, ...this.runners]
    await Promise.all(
      processes.map(
        async (p) =>
          await new Promise<void>((resolve) => {
            if (p.child.exitCode !== null || p.child.signalCode !== null) {
              resolve()
              return
            }
            const hard = setTimeout(() => {
              if (p.child.pid !== undefined) signalAll(processTree(p.child.pid), 'SIGKILL')
            }, 10_000)
            p.child.once('exit', () => {
              clearTimeout(hard)
              resolve()
            })
            p.child.kill('SIGTERM')
          })
      )
    )
    for (const link of this.#links) await run('ip', ['link', 'del', link]).catch(() => {})
    for (const netns of this.#namespaces) await run('ip', ['netns', 'del', netns]).catch(() => {})
  }
}
