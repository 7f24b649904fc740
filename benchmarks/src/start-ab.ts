/**
 * Start-up side by side: how long `sandfleet serve` from each checkout takes from spawn until
 * `/readyz` answers 200 (Node's start-up, the modules, the pool warm, the gateway listening),
 * the builds taking turns round after round (round r starts with build r mod n) so that a
 * shared machine's load falls on every build alike. Per build: the median, its ratio to the first
 * build's, and every round.
 *
 * @example
 * ```sh
 * node --import tsx benchmarks/src/start-ab.ts before=/work/wt-base after=.
 * SANDFLEET_AB_ARGS="--backend pyodide --pool-size 4" SANDFLEET_AB_ROUNDS=5 \
 *   node --import tsx benchmarks/src/start-ab.ts tsx=.@SANDFLEET_NO_BUNDLE=1 bundle=.
 * ```
 * Environment: SANDFLEET_AB_ARGS (serve flags, default `--backend process --pool-size 4`),
 * SANDFLEET_AB_ROUNDS (5).
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { captureEnvironment } from './environment.ts'
import { environmentBlock } from './report.ts'
import { parseBuild, serveArgv } from './serve-ab.ts'
import { median } from './stats.ts'

const PORT = 18_790
/** Pause after each start, before the next. */
const SETTLE_MS = 3000

/** Milliseconds from spawning `sandfleet serve` in `dir` until its /readyz answers 200; then stops it. */
export async function timeStart(
  dir: string,
  env: Record<string, string>,
  args: readonly string[],
  port = PORT
): Promise<number> {
  const started = performance.now()
  const child = spawn(process.execPath, serveArgv(dir, port, args), {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, ...env }
  })
  try {
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return performance.now() - started
      } catch {}
      if (child.exitCode !== null || performance.now() - started > 120_000)
        throw new Error(`sandfleet serve from ${dir} did not become ready`)
      await sleep(10)
    }
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await once(child, 'exit')
    }
  }
}

/** Runs the comparison, prints its table; returns the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>
): Promise<number> {
  const specs = argv.map(parseBuild)
  if (specs.length < 2 || specs.some((s) => s === undefined)) {
    console.error(
      "usage: node --import tsx benchmarks/src/start-ab.ts NAME=CHECKOUT[@VAR=VALUE...] NAME=CHECKOUT[@VAR=VALUE...] [...] (see the file's comment)"
    )
    return 2
  }
  const builds = specs.map((s) => ({ ...(s as NonNullable<typeof s>), ms: [] as number[] }))
  const args = (env.SANDFLEET_AB_ARGS ?? '--backend process --pool-size 4').split(' ').filter((a) => a !== '')
  const rounds = Number(env.SANDFLEET_AB_ROUNDS ?? 5)
  const environment = await captureEnvironment(argv, env, 'node --import tsx benchmarks/src/start-ab.ts')
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < builds.length; k++) {
      const b = builds[(r + k) % builds.length]
      b.ms.push(await timeStart(b.dir, b.env, args))
      // What the stopped serve leaves finishing (a pyodide host disposes its isolates) settles first.
      await sleep(SETTLE_MS)
    }
  }
  const base = median(builds[0].ms)
  console.log(
    `# start-ab: sandfleet serve ${args.join(' ')}, spawn to /readyz 200, ${rounds} rounds\n\n${environmentBlock(environment)}\n`
  )
  console.log('| build | spawn to ready, median ms | each round, ms |')
  console.log('| --- | --- | --- |')
  for (const b of builds)
    console.log(
      `| ${b.name} (${b.dir}) | ${Math.round(median(b.ms))} (×${(median(b.ms) / base).toFixed(2)}) | ${b.ms.map((x) => Math.round(x)).join(' ')} |`
    )
  return 0
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), process.env)
}
