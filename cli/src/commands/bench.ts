/**
 * `sandfleet bench SCENARIO [flags]`: the load-testing harness (benchmarks/, its own package, so
 * load tools never become dependencies of the services), run as a child process. Same as
 * `npm run bench -- SCENARIO [flags]`; `sandfleet bench help` lists the scenarios.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const MAIN = fileURLToPath(new URL('../../../benchmarks/src/main.ts', import.meta.url))

/** Runs the harness; resolves when it exits, with its exit code as the process's. */
export async function bench (argv: string[]): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`the benchmarks are not in this installation (${MAIN} is missing)`)
  const child = spawn(process.execPath, ['--no-node-snapshot', '--import', 'tsx', MAIN, ...argv], { stdio: 'inherit' })
  process.exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)))
}
