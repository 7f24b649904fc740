/**
 * `sandfleet bench SCENARIO [flags]`: the load-testing harness (benchmarks/, its own package, so
 * load tools never become dependencies of the services), run as a child process. Same as
 * `npm run bench -- SCENARIO [flags]`; `sandfleet bench help` lists the scenarios.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { basename, relative } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BENCHMARKS_MAIN, benchmarksInstalled } from '../benchmarks-path.ts'

/**
 * This command as the user started it: `sandfleet bench` from the PATH, else `node PATH bench` (the script's path from
 * here).
 */
export function invokedAs(script: string | undefined, cwd: string): string {
  if (script === undefined || basename(script) === 'sandfleet') return 'sandfleet bench'
  const path = relative(cwd, script)
  return `node ${path === '' || path.startsWith('..') ? script : path} bench`
}

/** Runs the harness; resolves when it exits, with its exit code as the process's. */
export async function bench(argv: string[]): Promise<void> {
  if (!benchmarksInstalled())
    throw new Error(
      `the benchmarks are not in this installation (${BENCHMARKS_MAIN} is missing): run sandfleet bench from a checkout of the repository`
    )
  // The report records the command as it was run (benchmarks/src/environment.ts, benchProgram).
  const env = { ...process.env, _SANDFLEET_BENCH_COMMAND: invokedAs(process.argv[1], process.cwd()) }
  // tsx by its path from the harness: a bare `--import tsx` resolves from the working directory.
  const tsx = pathToFileURL(createRequire(BENCHMARKS_MAIN).resolve('tsx')).href
  const child = spawn(process.execPath, ['--no-node-snapshot', '--import', tsx, BENCHMARKS_MAIN, ...argv], {
    stdio: 'inherit',
    env
  })
  process.exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
}
