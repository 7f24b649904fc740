/** What every scenario receives, and the shape of a scenario in the command table. */
import type { Server } from '../fleet.ts'
import type { BenchOptions } from '../options.ts'
import type { ScenarioResult } from '../report.ts'

/** Shared state of one `npm run bench` invocation. */
export interface BenchContext {
  options: BenchOptions
  /** A progress line (stderr). */
  log: (line: string) => void
  /** The fleet scenarios share: `--url`, or a `sandfleet serve` started on first use and stopped at the end. */
  fleet: () => Promise<Server>
  /** Starts a `sandfleet serve` with these extra flags, stopped at the end of the invocation (or by its `close`). */
  startFleet: (args: readonly string[]) => Promise<Server>
  /** The naive baseline server, started on first use. */
  naive: () => Promise<Server>
  /** The fork-on-demand prototype of issue 2 with `preload` imported, started on first use of that preload. */
  prototype: (preload: string) => Promise<Server>
  /** Runs a scenario once per invocation; a second call returns the first result (the suite reuses runs). */
  run: (name: string) => Promise<ScenarioResult>
  /** Whether `name` already ran (or is running) in this invocation. */
  has: (name: string) => boolean
}

/** An entry of the command table. */
export interface Scenario {
  /** One line for the usage message. */
  summary: string
  run: (ctx: BenchContext) => Promise<ScenarioResult>
}

/** `--backend`, and `--pool-size` when given: the flags of every fleet the harness starts. */
export function serveArgs(options: BenchOptions, poolSize = options.poolSize): string[] {
  return ['--backend', options.backend, ...(poolSize === undefined ? [] : ['--pool-size', String(poolSize)])]
}

/** A note naming the fleet a run used. */
export function fleetNote(server: Server): string {
  const pool =
    server.poolSize === undefined ? '' : `, ${server.poolSize} Python sandbox${server.poolSize === 1 ? '' : 'es'}`
  return `fleet: \`${server.description}\`${server.isolation === undefined ? '' : ` (${server.isolation}${pool})`}`
}
