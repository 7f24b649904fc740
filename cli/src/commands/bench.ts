/**
 * `sandfleet bench SCENARIO [flags]`: the load-testing harness (benchmarks/, its own package, so
 * load tools never become dependencies of the services), run as a child process. Same as
 * `npm run bench -- SCENARIO [flags]`; `sandfleet bench help` lists the scenarios.
 */
import { spawn } from 'node:child_process'
import { BENCHMARKS_MAIN, benchmarksInstalled } from '../benchmarks-path.ts'

/** Runs the harness; resolves when it exits, with its exit code as the process's. */
export async function bench (argv: string[]): Promise<void> {
  if (!benchmarksInstalled()) throw new Error(`the benchmarks are not in this installation (${BENCHMARKS_MAIN} is missing): run sandfleet bench from a checkout of the repository`)
  const child = spawn(process.execPath, ['--no-node-snapshot', '--import', 'tsx', BENCHMARKS_MAIN, ...argv], { stdio: 'inherit' })
  process.exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
}
