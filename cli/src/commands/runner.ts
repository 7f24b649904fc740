/**
 * `sandfleet runner`: one runner and its internal API (for gateways), configured by flags
 * (`--backend process --pool-size 8 --port 8081`) or `SANDFLEET_*` variables. It says at
 * start-up which backend it chose and what that protects against; it drains on SIGTERM.
 */
import { runnerMain } from '@sandfleet/runner'

/** Runs the command until SIGINT/SIGTERM. */
export async function runner(argv: string[]): Promise<void> {
  await runnerMain(argv, process.env)
}
