/**
 * Two (or more) sandfleet checkouts side by side over HTTP: one `sandfleet serve` from each
 * (each checkout with its own `npm ci`), warmed up in turn, then closed-loop load runs that take
 * turns (round r starts with build r mod n), so a shared machine's load falls on every build
 * alike. Per build: the median over the rounds of the server's CPU per call (whole process tree),
 * of its main thread's, of the load generator's, calls/s and p50; and each median over the
 * first build's. Ratios are the figure to quote; absolute values move with the machine's load.
 *
 * @example
 * ```sh
 * node --import tsx benchmarks/src/serve-ab.ts base=/work/main new=/work/wt-js
 * SANDFLEET_AB_ARGS="--backend process" SANDFLEET_AB_CODE='print(1+1)' SANDFLEET_AB_LANGUAGE=python \
 *   SANDFLEET_AB_CONCURRENCY=64 node --import tsx benchmarks/src/serve-ab.ts a=/x b=/y
 * # one checkout, two executors: a build's variables follow its checkout, each after an @
 * node --import tsx benchmarks/src/serve-ab.ts old=.@SANDFLEET_EXECUTOR_PATH=/tmp/old-executor.py new=.
 * ```
 * Environment: SANDFLEET_AB_ARGS (serve flags, default `--languages javascript`),
 * SANDFLEET_AB_LANGUAGE (javascript), SANDFLEET_AB_CODE (console.log(1+1)), SANDFLEET_AB_STDOUT
 * (2\n), SANDFLEET_AB_CONCURRENCY (16), SANDFLEET_AB_ROUNDS (7), SANDFLEET_AB_SECONDS (4 per run),
 * SANDFLEET_AB_WARMUP (10 s of load per build before the rounds: the JIT of the gateway path),
 * SANDFLEET_AB_BATCH (items per request: with it, each request is a `/v1/execute/batch` of that
 * many copies of the call, concurrency counts batches, and every figure stays per call),
 * SANDFLEET_AB_NDJSON=1 (the batches streamed: `accept: application/x-ndjson`),
 * SANDFLEET_AB_SANDBOX=instant (each build's gateway and runner with sandboxes that answer at
 * once, instant-fleet.ts, instead of its `sandfleet serve`: the node path alone; SANDFLEET_AB_ARGS
 * is not used then).
 *
 * A workload instead of one call: SANDFLEET_AB_WORKLOAD (a workload of `sandfleet bench`:
 * `rl-mix`, `rl-step`, `jsonl` with SANDFLEET_AB_FILE, …; SANDFLEET_AB_SEED, default 1) sends its
 * calls in turn through the product run's engine (each answer checked against its call's own
 * status and stdout), batched by SANDFLEET_AB_BATCH. Per build then: right calls/s, the fleet's
 * CPU per call (its process tree, from the run's start until the tree is idle after it: the
 * answers of requests still out at its end and a replacement it set going included), the useful share (the results'
 * `cpu_ms` over that CPU; n/a for a build whose results carry none) and p50.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { captureEnvironment } from './environment.ts'
import { classifyBatch, classifyExecute, classifyNdjsonBatch, runLoad, type LoadTarget } from './load.ts'
import { environmentBlock } from './report.ts'
import { median, summarize } from './stats.ts'
import { settle } from './cpu.ts'
import { startFleetCpuMeter } from './fleet-cpu.ts'
import { runPlan } from './run/engine.ts'
import { TARGET_TABLE } from './run/targets.ts'
import { drawCalls, WORKLOADS, type BenchCall, type WorkloadName } from './workloads/calls.ts'

interface Build {
  name: string
  dir: string
  child: ChildProcess
  url: string
  cpuMs: number[]
  mainMs: number[]
  harnessMs: number[]
  callsPerS: number[]
  p50Ms: number[]
  /** Workload mode: each round's useful share (NaN without `cpu_ms`) and calls answered wrong, failed or lost. */
  useful: number[]
  bad: number[]
}

/** CPU ms of `pid`'s main thread so far. */
function mainThreadMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

/** Node's arguments for `sandfleet serve` from checkout `dir` on 127.0.0.1:`port`, logging warnings only. */
export function serveArgv(dir: string, port: number, args: readonly string[]): string[] {
  return [
    '--no-node-snapshot',
    `${dir}/bin/sandfleet.mjs`,
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--log-level',
    'warn',
    ...args
  ]
}

async function startBuild(
  name: string,
  dir: string,
  extraEnv: Record<string, string>,
  port: number,
  args: readonly string[],
  probe: string,
  instant: boolean
): Promise<Build> {
  const argv = instant
    ? ['--import', 'tsx', fileURLToPath(new URL('instant-fleet.ts', import.meta.url)), dir, String(port)]
    : serveArgv(dir, port, args)
  const child = spawn(process.execPath, argv, {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...extraEnv }
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(`${url}/v1/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: probe
      })
      if (res.status === 200) break
    } catch {}
    if (i > 900 || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error(`sandfleet serve from ${dir} did not start`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { name, dir, child, url, cpuMs: [], mainMs: [], harnessMs: [], callsPerS: [], p50Ms: [], useful: [], bad: [] }
}

/** One build of the comparison: `NAME=CHECKOUT`, then `@VAR=VALUE` for each variable its serve gets. */
interface BuildSpec {
  name: string
  dir: string
  env: Record<string, string>
}

/** Parses `NAME=CHECKOUT[@VAR=VALUE...]`; undefined when malformed. */
export function parseBuild(arg: string): BuildSpec | undefined {
  const eq = arg.indexOf('=')
  if (eq <= 0) return undefined
  const [dir, ...assignments] = arg.slice(eq + 1).split('@')
  if (dir === '') return undefined
  const env: Record<string, string> = {}
  for (const a of assignments) {
    const i = a.indexOf('=')
    if (i <= 0) return undefined
    env[a.slice(0, i)] = a.slice(i + 1)
  }
  return { name: arg.slice(0, eq), dir, env }
}

/**
 * What one request of the comparison is: the call alone to `/v1/execute` (`batch` 0), or
 * `batch` copies of it to `/v1/execute/batch` (streamed as NDJSON with `ndjson`), each item
 * checked for `stdout`.
 */
export function batchTarget(url: string, call: string, batch: number, stdout: string, ndjson = false): LoadTarget {
  if (batch === 0)
    return { url, path: '/v1/execute', body: call, callsPerRequest: 1, classify: classifyExecute(stdout) }
  const item = JSON.parse(call) as object
  const body = JSON.stringify({ requests: Array.from({ length: batch }, () => item) })
  if (ndjson)
    return {
      url,
      path: '/v1/execute/batch',
      body,
      accept: 'application/x-ndjson',
      callsPerRequest: batch,
      classify: classifyNdjsonBatch(batch, stdout)
    }
  return { url, path: '/v1/execute/batch', body, callsPerRequest: batch, classify: classifyBatch(batch, stdout) }
}

/** A round of the workload mode, in a closed loop of `concurrency` requests for `seconds`. */
export interface WorkloadRound {
  rightPerS: number
  cpuMsPerCall: number
  usefulShare: number
  p50Ms: number
  bad: number
}

/**
 * One closed-loop run of `calls` (cycled from `offset`) against `url`, single calls or batches of
 * `batch`, the CPU of the process tree of `pid` measured around it.
 */
export async function workloadRound(
  url: string,
  pid: number,
  calls: readonly BenchCall[],
  offset: number,
  concurrency: number,
  seconds: number,
  batch: number
): Promise<WorkloadRound> {
  const meter = startFleetCpuMeter({ pids: [pid] })
  const r = await runPlan({
    mode: 'closed',
    url,
    target: TARGET_TABLE[batch > 0 ? 'batch' : 'single'],
    callAt: (n) => calls[(offset + n) % calls.length],
    calls: 0,
    batchSize: Math.max(1, batch),
    connections: concurrency,
    rate: 0,
    durationS: seconds,
    sampleMs: 1000,
    requestTimeoutMs: 600_000
  })
  // Until the tree is idle: what the run set going (a replaced sandbox warming) is its own.
  await settle(pid, 30_000, 5, false)
  const used = await meter.stop()
  const a = r.accounting
  return {
    rightPerS: r.elapsedS > 0 ? a.right / r.elapsedS : 0,
    cpuMsPerCall: a.answered > 0 ? used.totalMs / a.answered : NaN,
    usefulShare: r.measuredCalls > 0 && used.totalMs > 0 ? r.callCpuMs / used.totalMs : NaN,
    p50Ms: summarize(r.latencyMs).p50,
    bad: a.wrong + a.failed + a.lost
  }
}

/** Runs the comparison; returns the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>
): Promise<number> {
  const specs = argv.map(parseBuild)
  if (specs.length < 2 || specs.some((s) => s === undefined)) {
    console.error(
      "usage: node --import tsx benchmarks/src/serve-ab.ts NAME=CHECKOUT[@VAR=VALUE...] NAME=CHECKOUT[@VAR=VALUE...] [...] (see the file's comment)"
    )
    return 2
  }
  const workload = env.SANDFLEET_AB_WORKLOAD
  if (workload !== undefined && !(WORKLOADS as readonly string[]).includes(workload)) {
    console.error(`SANDFLEET_AB_WORKLOAD: expected one of ${WORKLOADS.join(', ')}, got ${JSON.stringify(workload)}`)
    return 2
  }
  // A workload is Python's: its builds serve the process backend unless told, and are probed with print(1+1).
  const args = (env.SANDFLEET_AB_ARGS ?? (workload === undefined ? '--languages javascript' : '--backend process'))
    .split(' ')
    .filter((a) => a !== '')
  const language = env.SANDFLEET_AB_LANGUAGE ?? (workload === undefined ? 'javascript' : 'python')
  const body = JSON.stringify({
    language,
    code: env.SANDFLEET_AB_CODE ?? (language === 'javascript' ? 'console.log(1+1)' : 'print(1+1)')
  })
  const batch = Number(env.SANDFLEET_AB_BATCH ?? 0)
  if (!Number.isInteger(batch) || batch < 0) {
    console.error(
      `SANDFLEET_AB_BATCH: expected a whole number of items per batch, got ${JSON.stringify(env.SANDFLEET_AB_BATCH)}`
    )
    return 2
  }
  const concurrency = Number(env.SANDFLEET_AB_CONCURRENCY ?? 16)
  const rounds = Number(env.SANDFLEET_AB_ROUNDS ?? 7)
  const seconds = Number(env.SANDFLEET_AB_SECONDS ?? 4)
  const warmupS = Number(env.SANDFLEET_AB_WARMUP ?? 10)
  const ndjson = env.SANDFLEET_AB_NDJSON === '1'
  const instant = env.SANDFLEET_AB_SANDBOX === 'instant'
  if ((env.SANDFLEET_AB_SANDBOX ?? 'instant') !== 'instant') {
    console.error(`SANDFLEET_AB_SANDBOX: expected instant (or unset), got ${JSON.stringify(env.SANDFLEET_AB_SANDBOX)}`)
    return 2
  }
  let calls: BenchCall[] = []
  try {
    if (workload !== undefined)
      calls = drawCalls(
        {
          name: workload as WorkloadName,
          seed: Number(env.SANDFLEET_AB_SEED ?? 1),
          sleepS: 0.3,
          ...(env.SANDFLEET_AB_FILE === undefined ? {} : { file: env.SANDFLEET_AB_FILE })
        },
        10_000
      )
  } catch (err) {
    console.error(`SANDFLEET_AB_WORKLOAD ${workload ?? ''}: ${(err as Error).message}`)
    return 2
  }
  const environment = await captureEnvironment(argv, env, 'node --import tsx benchmarks/src/serve-ab.ts')
  const builds: Build[] = []
  try {
    for (const [i, spec] of specs.entries()) {
      const { name, dir, env: extraEnv } = spec as BuildSpec
      builds.push(await startBuild(name, dir, extraEnv, 18_700 + i, args, body, instant))
    }
    if (workload !== undefined) {
      for (const b of builds) await workloadRound(b.url, b.child.pid as number, calls, 0, concurrency, warmupS, batch)
      let offset = 0
      for (let r = 0; r < rounds; r++) {
        for (let k = 0; k < builds.length; k++) {
          const b = builds[(r + k) % builds.length]
          // Every build gets the same calls in a round; the next round goes on in the draw.
          const round = await workloadRound(b.url, b.child.pid as number, calls, offset, concurrency, seconds, batch)
          b.callsPerS.push(round.rightPerS)
          b.cpuMs.push(round.cpuMsPerCall)
          b.useful.push(round.usefulShare)
          b.p50Ms.push(round.p50Ms)
          b.bad.push(round.bad)
        }
        offset += 997
      }
      const first = builds[0]
      const cell = (xs: number[], base: number[], digits = 3): string =>
        `${median(xs).toFixed(digits)} (×${(median(xs) / median(base)).toFixed(2)})`
      const share = (xs: number[]): string =>
        xs.some((x) => Number.isNaN(x)) ? 'n/a (no cpu_ms)' : `${(median(xs) * 100).toFixed(1)} %`
      const shape =
        batch > 0 ? `in batches of ${batch}, ${concurrency} batches in flight` : `at concurrency ${concurrency}`
      console.log(
        `# serve-ab: workload ${workload}${workload === 'jsonl' ? ` (${env.SANDFLEET_AB_FILE ?? '?'})` : ''} ${shape}, ${rounds} rounds of ${seconds} s, serve ${args.join(' ')}\n\n${environmentBlock(environment)}\n`
      )
      console.log(
        '| build | right calls/s | fleet CPU ms/call | useful share | p50 ms | wrong, failed or lost | right calls/s, each round |'
      )
      console.log('| --- | --- | --- | --- | --- | --- | --- |')
      for (const b of builds) {
        console.log(
          `| ${b.name} (${b.dir}) | ${cell(b.callsPerS, first.callsPerS, 1)} | ${cell(b.cpuMs, first.cpuMs)} | ${share(b.useful)} | ${cell(b.p50Ms, first.p50Ms, 1)} | ${b.bad.reduce((x, y) => x + y, 0)} | ${b.callsPerS.map((x) => x.toFixed(1)).join(' ')} |`
        )
      }
      return 0
    }
    const target = (b: Build): LoadTarget => batchTarget(b.url, body, batch, env.SANDFLEET_AB_STDOUT ?? '2\n', ndjson)
    for (const b of builds) await runLoad(target(b), { concurrency, durationS: warmupS, warmupS: 0 })
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < builds.length; k++) {
        const b = builds[(r + k) % builds.length]
        const pid = b.child.pid as number
        const main0 = mainThreadMs(pid)
        const harness0 = process.cpuUsage()
        const report = await runLoad(target(b), { concurrency, durationS: seconds, warmupS: 0.5, serverPid: pid })
        const harness = process.cpuUsage(harness0)
        // The main thread and the harness are read over the warm-up too: scale to the recorded window.
        const scale = seconds / (seconds + 0.5)
        if (report.failures > 0) console.error(`${b.name}: ${JSON.stringify(report.counts)}`)
        b.cpuMs.push(report.serverCpuMsPerCall ?? NaN)
        b.mainMs.push(((mainThreadMs(pid) - main0) * scale) / report.calls)
        b.harnessMs.push((((harness.user + harness.system) / 1000) * scale) / report.calls)
        b.callsPerS.push(report.okCallsPerS)
        b.p50Ms.push(report.latencyMs.p50)
      }
    }
    const first = builds[0]
    const cell = (xs: number[], base: number[], digits = 3): string =>
      `${median(xs).toFixed(digits)} (×${(median(xs) / median(base)).toFixed(2)})`
    const shape =
      batch > 0
        ? `in batches of ${batch} (/v1/execute/batch${ndjson ? ', NDJSON' : ''}), ${concurrency} batches in flight`
        : `at concurrency ${concurrency}`
    const fleet = instant ? 'instant sandboxes (instant-fleet.ts)' : `serve ${args.join(' ')}`
    console.log(
      `# serve-ab: ${language} \`${body}\` ${shape}, ${rounds} rounds of ${seconds} s, ${fleet}\n\n${environmentBlock(environment)}\n`
    )
    console.log(
      '| build | server CPU ms/call | of which main thread | load generator ms/call | calls/s | p50 ms | server CPU ms/call, each round |'
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- |')
    for (const b of builds) {
      console.log(
        `| ${b.name} (${b.dir}) | ${cell(b.cpuMs, first.cpuMs)} | ${cell(b.mainMs, first.mainMs)} | ${cell(b.harnessMs, first.harnessMs)} | ${cell(b.callsPerS, first.callsPerS, 0)} | ${cell(b.p50Ms, first.p50Ms, 2)} | ${b.cpuMs.map((x) => x.toFixed(2)).join(' ')} |`
      )
    }
    return 0
  } finally {
    for (const b of builds) b.child.kill('SIGTERM')
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), process.env)
}
