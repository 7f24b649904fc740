/**
 * The docker backend of issue 3, side by side with the process backend in the same invocation
 * (so the ratios hold on a shared machine even when the absolute figures move):
 * - pool start: `Runner.start()` of a pool of `--pool-size` (8) until every sandbox is warm,
 *   in this process (driver check, stale-container sweep and manifest read included), and
 *   `sandfleet serve` spawn to serving (Node start-up included);
 * - `print(1+1)` p50 at concurrency 1 and ok calls/s at concurrency 64, through `serve`;
 * - replacement: an idle container killed from outside (`docker kill`) until its replacement is
 *   warm (the runner's `sandfleet_runner_sandbox_replace_seconds`, and as the harness sees it on
 *   `/metrics`, the `docker kill` command's own time included); and a `timeout` result until the
 *   next call is answered on a pool of one (by the same container: a timeout keeps it). The docker
 *   driver keeps one warm spare container; rounds are GAP_S apart, so it has re-booted in between
 *   (a burst of kills meets cold boots).
 * - where a docker call's CPU goes outside the fleet's tree: the engine (the attached stream) and
 *   the containers, at concurrency 64.
 */
import { execFile } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { request } from 'undici'
import { Runner, runnerConfig } from '@sandfleet/runner'
import type { Server } from '../fleet.ts'
import { emptyResult, type ScenarioResult } from '../report.ts'
import { summarize } from '../stats.ts'
import { fleetNote, type BenchContext, type Scenario } from './context.ts'
import { replaceMetric } from './timeout-cost.ts'
import { TRIVIAL, loadExecute } from './workloads.ts'

const run = promisify(execFile)
const EXECUTOR = fileURLToPath(new URL('../../../sandbox-images/python/executor.py', import.meta.url))
const BACKENDS = ['docker', 'process'] as const
type Backend = (typeof BACKENDS)[number]
const LABEL = 'org.sandfleet.runner'
/** Seconds between starting the fleets and measuring, and between replacement rounds (the spare re-boots). */
const SETTLE_S = 20
const GAP_S = 3

/** This checkout's executor for both backends (the image on a shared engine may hold another's). */
function backendArgs(backend: Backend, id: string, pool: number): string[] {
  return [
    '--backend',
    backend,
    '--pool-size',
    String(pool),
    '--id',
    id,
    '--max-sessions',
    '0',
    '--languages',
    'python',
    '--executor-path',
    EXECUTOR
  ]
}

async function execute(url: string, body: unknown): Promise<{ status?: string; stdout?: string; sandbox?: string }> {
  const res = await request(`${url}/v1/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  return JSON.parse(await res.body.text()) as { status?: string; stdout?: string; sandbox?: string }
}

/**
 * CPU outside the fleet's process tree that a docker call costs, in ms so far: the engine
 * (dockerd, containerd and the shims, which copy the attached stream) by /proc, and every
 * container (cgroup v1 cpuacct of /docker). Other work on the same engine is counted too.
 */
function engineCpuMs(): { engine: number; containers: number } {
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (!/^(dockerd|containerd)(\0|$)|containerd-shim/.test(cmd)) continue
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[11]) + Number(f[12])
    } catch {}
  }
  let containers = NaN
  try {
    containers = Number(readFileSync('/sys/fs/cgroup/cpuacct/docker/cpuacct.usage', 'utf8')) / 1e6
  } catch {}
  return { engine: ticks * 10, containers }
}

/** In-process: until a Runner's pool of `pool` has every sandbox warm, median of `rounds`. */
async function poolStart(backend: Backend, pool: number, rounds: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const runner = new Runner(
      runnerConfig({
        id: `bench-start-${backend}-${process.pid}-${i}`,
        backend,
        poolSize: pool,
        languages: ['python'],
        maxSessions: 0,
        executorPath: EXECUTOR
      })
    )
    const t0 = performance.now()
    try {
      await runner.start()
      while (runner.poolStats()[0].warm < pool) await new Promise((resolve) => setTimeout(resolve, 5))
      times.push((performance.now() - t0) / 1000)
    } finally {
      await runner.close()
    }
  }
  return times
}

/** A job that prints the id of the container it runs in (the engine mounts files of the container's own directory). */
const CONTAINER_ID =
  'import re\nprint(re.search(r"/containers/([0-9a-f]{64})/", open("/proc/self/mountinfo").read()).group(1))'

/** `docker kill` an idle container of runner `id`, until /metrics counts its replacement; `rounds` times. */
async function killReplace(
  ctx: BenchContext,
  server: Server,
  id: string,
  rounds: number
): Promise<{ seen: number[]; runner: number }> {
  const before = await replaceMetric(server.url)
  const seen: number[] = []
  for (let i = 0; i < rounds; i++) {
    // The victim is the pool sandbox that served this call (not the spare): its container's id, which the engine's
    // bind mounts (/etc/hostname and the like, from the container's own directory) show in the job's mountinfo.
    const warm = await execute(server.url, { code: CONTAINER_ID })
    if (warm.status !== 'ok') throw new Error(`docker fleet answered ${warm.status ?? '?'} before a kill`)
    const { stdout } = await run('docker', ['ps', '-q', '--no-trunc', '--filter', `label=${LABEL}=${id}`])
    const victim = stdout.split('\n').find((c) => c !== '' && c === (warm.stdout ?? '').trim())
    if (victim === undefined) throw new Error(`no container ${warm.stdout ?? '?'} labelled ${LABEL}=${id}`)
    await new Promise((resolve) => setTimeout(resolve, GAP_S * 1000))
    const count = (await replaceMetric(server.url)).count
    const t0 = performance.now()
    await run('docker', ['kill', victim])
    for (;;) {
      if ((await replaceMetric(server.url)).count > count) break
      if (performance.now() - t0 > 30_000) throw new Error('no replacement within 30 s of docker kill')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    seen.push((performance.now() - t0) / 1000)
  }
  const after = await replaceMetric(server.url)
  ctx.log(`  ${rounds} kills: replaced after ${seen.map((s) => s.toFixed(3)).join(', ')} s`)
  return { seen, runner: (after.sum - before.sum) / Math.max(1, after.count - before.count) }
}

/**
 * A `timeout` result until the next call is answered, on a fleet of one sandbox (the same one: a timeout keeps its
 * sandbox).
 */
async function afterTimeout(server: Server, rounds: number): Promise<number[]> {
  const gaps: number[] = []
  for (let i = 0; i < rounds; i++) {
    await new Promise((resolve) => setTimeout(resolve, GAP_S * 1000))
    await execute(server.url, { code: 'print(1+1)' })
    const spin = await execute(server.url, { code: 'while True: pass', timeout_ms: 100 })
    const t0 = performance.now()
    if (spin.status !== 'timeout') throw new Error(`the spin answered ${spin.status ?? '?'}`)
    const next = await execute(server.url, { code: 'print(1+1)' })
    if (next.status !== 'ok' || next.sandbox !== spin.sandbox)
      throw new Error(
        `after the timeout: ${next.status ?? '?'} on ${next.sandbox ?? '?'}, not on ${spin.sandbox ?? '?'}, the sandbox that timed out`
      )
    gaps.push((performance.now() - t0) / 1000)
  }
  return gaps
}

/** The scenario. */
export const dockerBench: Scenario = {
  summary:
    'docker backend beside process: pool of 8 warm (≤ 3 s), print(1+1) p50 at 1 (≤ 5 ms) and calls/s at 64 (≥ 800), replaced after a kill (≤ 0.5 s)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const pool = ctx.options.poolSize ?? 8
    const rounds = ctx.options.repeats
    const { figures, runs, notes } = emptyResult()
    const by: Record<string, Record<Backend, number>> = {}
    const put = (key: string, backend: Backend, value: number): void => {
      ;(by[key] ??= { docker: NaN, process: NaN })[backend] = value
    }

    for (const backend of BACKENDS) {
      const times = await poolStart(backend, pool, 3)
      ctx.log(`  ${backend}: pool of ${pool} warm after ${times.map((t) => t.toFixed(2)).join(', ')} s`)
      const s = summarize(times)
      put('start', backend, s.p50)
      figures.push({
        scenario: `docker`,
        name: `${backend}: Runner.start() until ${pool} sandboxes warm, median of ${s.n}`,
        value: s.p50,
        unit: 's',
        ...(backend === 'docker' ? { target: { op: '<=' as const, value: 3 } } : {})
      })
    }

    const servers: Partial<Record<Backend, Server>> = {}
    for (const backend of BACKENDS) {
      const t0 = performance.now()
      servers[backend] = await ctx.startFleet(backendArgs(backend, `bench-${backend}-${process.pid}`, pool))
      figures.push({
        scenario: 'docker',
        name: `${backend}: sandfleet serve --pool-size ${pool}, spawn to serving (Node start-up included)`,
        value: (performance.now() - t0) / 1000,
        unit: 's'
      })
    }
    // Each sandbox warms its sci tier (numpy, sympy, scipy imported) in the background after the
    // pool is up; let both fleets finish that before measuring.
    ctx.log(`  settling ${SETTLE_S} s (sci tiers warming)`)
    await new Promise((resolve) => setTimeout(resolve, SETTLE_S * 1000))
    for (const c of [1, 64]) {
      for (const backend of BACKENDS) {
        const server = servers[backend] as Server
        const cpu0 = engineCpuMs()
        const report = await loadExecute(ctx, server, TRIVIAL, c)
        const cpu1 = engineCpuMs()
        // loadExecute records after its warm-up; the CPU deltas span warm-up and window, so divide by both.
        const calls = report.okCallsPerS * (ctx.options.durationS + ctx.options.warmupS)
        if (backend === 'docker' && c === 64 && calls > 0) {
          figures.push({
            scenario: 'docker',
            name: 'docker: engine CPU per call (dockerd, containerd, shims: the attached stream), approx.',
            value: (cpu1.engine - cpu0.engine) / calls,
            unit: 'ms'
          })
          if (Number.isFinite(cpu1.containers))
            figures.push({
              scenario: 'docker',
              name: "docker: containers' CPU per call (the executor and its job), approx.",
              value: (cpu1.containers - cpu0.containers) / calls,
              unit: 'ms'
            })
        }
        runs.push({ scenario: `docker c${c}`, server: `sandfleet --backend ${backend}`, report })
        if (c === 1) {
          put('p50', backend, report.latencyMs.p50)
          figures.push({
            scenario: 'docker',
            name: `${backend}: print(1+1) p50, concurrency 1`,
            value: report.latencyMs.p50,
            unit: 'ms',
            ...(backend === 'docker' ? { target: { op: '<=' as const, value: 5 } } : {})
          })
          figures.push({
            scenario: 'docker',
            name: `${backend}: of which the run in the sandbox (duration_ms) p50`,
            value: report.runMs.p50,
            unit: 'ms'
          })
        } else {
          put('c64', backend, report.okCallsPerS)
          figures.push({
            scenario: 'docker',
            name: `${backend}: print(1+1) ok calls/s, concurrency 64`,
            value: report.okCallsPerS,
            unit: 'calls/s',
            ...(backend === 'docker' ? { target: { op: '>=' as const, value: 800 } } : {})
          })
          if (report.serverCpuMsPerCall !== undefined)
            figures.push({
              scenario: 'docker',
              name: `${backend}: fleet CPU per call (whole process tree, containers not included for docker)`,
              value: report.serverCpuMsPerCall,
              unit: 'ms'
            })
        }
      }
    }
    const kill = await killReplace(ctx, servers.docker as Server, `bench-docker-${process.pid}`, rounds)
    const k = summarize(kill.seen)
    figures.push(
      {
        scenario: 'docker',
        name: `docker: docker kill of an idle container → replacement warm (seen on /metrics), max of ${k.n}`,
        value: k.max,
        unit: 's',
        target: { op: '<=', value: 0.5 }
      },
      { scenario: 'docker', name: `docker: docker kill → replacement warm, p50 of ${k.n}`, value: k.p50, unit: 's' },
      {
        scenario: 'docker',
        name: 'docker: runner: out of service → replacement ready, mean',
        value: kill.runner,
        unit: 's'
      }
    )
    for (const backend of BACKENDS) notes.push(fleetNote(servers[backend] as Server))
    for (const backend of BACKENDS) await servers[backend]?.close()

    for (const backend of BACKENDS) {
      const server = await ctx.startFleet(backendArgs(backend, `bench-one-${backend}-${process.pid}`, 1))
      await new Promise((resolve) => setTimeout(resolve, (SETTLE_S * 1000) / 2))
      const gaps = summarize(await afterTimeout(server, rounds))
      await server.close()
      put('timeout', backend, gaps.p50)
      figures.push({
        scenario: 'docker',
        name: `${backend}: timeout result → next call answered (pool of 1), p50 of ${gaps.n}`,
        value: gaps.p50,
        unit: 's'
      })
      figures.push({
        scenario: 'docker',
        name: `${backend}: timeout result → next call answered (pool of 1), max of ${gaps.n}`,
        value: gaps.max,
        unit: 's',
        ...(backend === 'docker' ? { target: { op: '<=' as const, value: 0.5 } } : {})
      })
    }

    const ratio = (key: string, name: string): void => {
      const r = by[key]
      if (r !== undefined)
        figures.push({
          scenario: 'docker',
          name: `ratio docker / process: ${name}`,
          value: r.docker / r.process,
          unit: '×'
        })
    }
    ratio('start', `pool of ${pool} warm`)
    ratio('p50', 'print(1+1) p50 at 1')
    ratio('c64', 'calls/s at 64')
    ratio('timeout', 'timeout → next call answered')
    notes.push(
      "both backends run this checkout's executor (--executor-path); docker: sandfleet/python:1 from the offline debootstrap build (Debian bookworm Python), process: the host's Python under bubblewrap"
    )
    return { figures, runs, notes }
  }
}
