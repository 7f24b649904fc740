/**
 * Where the load-testing harness is: beside the CLI in a checkout of the repository
 * (benchmarks/, its own package), absent from the packed @sandfleet/cli. `sandfleet help`
 * lists `bench` only where it is.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The harness's entry point. */
export const BENCHMARKS_MAIN = fileURLToPath(new URL('../../benchmarks/src/main.ts', import.meta.url))

/** True when the harness is in this installation. */
export function benchmarksInstalled(): boolean {
  return existsSync(BENCHMARKS_MAIN)
}
