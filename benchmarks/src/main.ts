/**
 * sandfleet's load harness: `npm run bench -- SCENARIO [flags]`. Each scenario drives a real
 * `sandfleet serve` (started as a child on 127.0.0.1, a free port; or `--url` to an existing
 * fleet) with a closed-loop undici load generator, and prints machine, date, commit and the exact
 * command beside its figures, as markdown ready for RESULTS.md (or one JSON document with --json).
 *
 * @example
 * ```sh
 * npm run bench -- suite                       # every target, 10 s each after 2 s of warm-up
 * npm run bench -- trivial-c64 --duration 5 --pool-size 4
 * SANDFLEET_BENCH_URL=http://127.0.0.1:8080 npm run bench -- sympy-c64
 * ```
 */
import { pathToFileURL } from 'node:url'
import { helpWidth, wrapHelp } from '@sandfleet/command-line'
import { settle } from './cpu.ts'
import { captureEnvironment } from './environment.ts'
import { existingServer, startForkPrototype, startNaive, startServe, type Server } from './fleet.ts'
import { flagHelp, parseBenchArgs, type BenchOptions } from './options.ts'
import { environmentBlock, figuresTable, runsTable, type ScenarioResult } from './report.ts'
import { serveArgs, type BenchContext } from './scenarios/context.ts'
import { SCENARIOS } from './scenarios/index.ts'
import { MODES, runProduct, type Mode } from './run/command.ts'
import { markdownReport } from './run/run-report.ts'

function usage(): string {
  const modes = Object.entries(MODES).map(([name, s]) => `  ${name.padEnd(22)} ${s}`)
  const rows = Object.entries(SCENARIOS).map(([name, s]) => `  ${name.padEnd(22)} ${s.summary}`)
  return wrapHelp(
    'usage: sandfleet bench MODE|SCENARIO [flags]\n       (in the repository also npm run bench -- MODE|SCENARIO [flags])\n\n' +
      `modes (any --target API, any --workload; every answer checked; reports as JSON, Markdown, HTML):\n${modes.join('\n')}\n\n` +
      `scenarios (figures for RESULTS.md):\n${rows.join('\n')}\n\nflags (each also its [environment variable]):\n${flagHelp()}\n\n` +
      // Each line within 80 columns: a command a terminal cut would not paste back whole.
      'examples:\n' +
      '  # a first quick run: 300 math tool calls against a fleet it starts, with\n' +
      '  # live progress; reports in sandfleet-bench-report.{json,md,html}\n' +
      '  sandfleet bench step --calls 300 --workload rl-mix --connections 4\n' +
      '  # the RL step: 45,000 calls at once in batches of 64, exit 1 if one fails\n' +
      '  sandfleet bench step --calls 45000 --target batch --batch-size 64 \\\n' +
      "      --connections 32 --threshold 'wrong==0' --threshold 'lost==0'",
    helpWidth()
  )
}

/** Runs one scenario or product run from the command line; returns the exit code. */
export async function main(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>
): Promise<number> {
  let parsed
  try {
    parsed = parseBenchArgs(argv, env)
  } catch (err) {
    console.error(`bench: ${(err as Error).message}\n\n${usage()}`)
    return 2
  }
  const { options, positionals, help } = parsed
  if (help) {
    console.log(usage())
    return 0
  }
  const name = positionals[0]
  if (name !== undefined && name in MODES && positionals.length === 1)
    return await product(name as Mode, argv, env, options)
  if (name === undefined || name === 'help' || SCENARIOS[name] === undefined || positionals.length > 1) {
    console.error(
      name === undefined || name === 'help' ? usage() : `bench: unknown scenario ${positionals.join(' ')}\n\n${usage()}`
    )
    return name === undefined || name === 'help' ? 0 : 2
  }
  const environment = { ...(await captureEnvironment(argv, env)), loadGenerator: options.engine }
  const out = (text: string): void => {
    ;(options.json ? process.stderr : process.stdout).write(text + '\n')
  }
  out(`# sandfleet bench: ${name}\n\n${environmentBlock(environment)}\n`)

  const servers: Server[] = []
  const started = async (server: Promise<Server>): Promise<Server> => {
    const s = await server
    servers.push(s)
    return s
  }
  // A SIGINT/SIGTERM to the harness alone stops the servers it started before it exits.
  const onSignal = (): void => {
    void Promise.all(servers.map((s) => s.close())).finally(() => process.exit(130))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  let shared: Promise<Server> | undefined
  let naive: Promise<Server> | undefined
  const prototypes = new Map<string, Promise<Server>>()
  const results = new Map<string, Promise<ScenarioResult>>()
  const settled = async (server: Server): Promise<Server> => {
    if (server.pid !== undefined)
      ctx.log(`  settled after ${await settle(server.pid)} ms (until it and the machine were idle: tiers warm)`)
    return server
  }
  const ctx: BenchContext = {
    options,
    log: (line) => {
      process.stderr.write(line + '\n')
    },
    // The fleet the scenarios share is measured warm: its executors' tiers warm in the background after it serves.
    fleet: () =>
      (shared ??=
        options.url !== undefined
          ? Promise.resolve(existingServer(options.url))
          : ctx.startFleet(serveArgs(options)).then(settled)),
    startFleet: async (args) => {
      // A scenario that needs fleets of its own (their start-up timed, their flags its own) must not
      // report them as the fleet the user named.
      if (options.url !== undefined)
        throw Object.assign(
          new Error(
            `--url: ${name} starts a fleet of its own (sandfleet serve ${args.join(' ')}), so it cannot measure the fleet at ${options.url}`
          ),
          { usage: true }
        )
      ctx.log(`starting sandfleet serve ${args.join(' ')}`)
      const server = await started(startServe(args))
      ctx.log(`  serving at ${server.url}${server.isolation === undefined ? '' : ` (${server.isolation})`}`)
      return server
    },
    naive: () => (naive ??= started(startNaive(options.python))),
    prototype: (preload) => {
      let p = prototypes.get(preload)
      if (p === undefined) prototypes.set(preload, (p = started(startForkPrototype(options.python, preload))))
      return p
    },
    has: (scenario) => results.has(scenario),
    run: (scenario) => {
      let r = results.get(scenario)
      if (r === undefined) {
        const s = SCENARIOS[scenario]
        if (s === undefined) throw new Error(`unknown scenario ${scenario}`)
        ctx.log(`${scenario}: ${s.summary}`)
        r = s.run(ctx)
        results.set(scenario, r)
      }
      return r
    }
  }
  try {
    const result = await ctx.run(name)
    if (options.json) {
      process.stdout.write(JSON.stringify({ scenario: name, environment, ...result }, null, 2) + '\n')
    } else {
      out(`## figures\n\n${figuresTable(result.figures)}\n`)
      if (result.runs.length > 0)
        out(
          `## load runs (${options.warmupS} s warm-up, ${options.durationS} s recorded, closed loop)\n\n${runsTable(result.runs)}\n`
        )
      if (result.notes.length > 0) out(result.notes.map((n) => `- ${n}`).join('\n') + '\n')
      out(environmentBlock(environment))
    }
    return 0
  } catch (err) {
    if ((err as { usage?: boolean }).usage === true) {
      console.error(`bench ${name}: ${(err as Error).message}`)
      return 2
    }
    console.error(`bench ${name}: ${(err as Error).stack ?? String(err)}`)
    return 1
  } finally {
    await Promise.all(servers.map((s) => s.close()))
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

/** A product run: progress on stderr, the Markdown report (or JSON with --json) on stdout. */
async function product(
  mode: Mode,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  options: BenchOptions
): Promise<number> {
  const environment = await captureEnvironment(argv, env)
  const log = (line: string): void => {
    process.stderr.write(line + '\n')
  }
  const servers: Server[] = []
  // A SIGINT/SIGTERM to the harness alone stops the fleet it started before it exits.
  const onSignal = (): void => {
    void Promise.all(servers.map((s) => s.close())).finally(() => process.exit(130))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    const { report, code } = await runProduct(mode, options, environment, log, (s) => servers.push(s))
    process.stdout.write(options.json ? JSON.stringify(report, null, 2) + '\n' : markdownReport(report) + '\n')
    for (const t of report.thresholds) if (!t.passed) log(`threshold ${t.text} failed: ${t.actual ?? 'no figure'}`)
    return code
  } catch (err) {
    console.error(`bench ${mode}: ${(err as Error).stack ?? String(err)}`)
    return 2
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2), process.env)
}
