/**
 * `sandfleet rollout`: a dataset through an inference engine and the fleet (see `@sandfleet/trainer`'s rolloutCommand).
 */
import { rolloutCommand } from '@sandfleet/trainer'

/** Runs the command with the process's stdout, stderr and environment. */
export async function rollout(argv: string[]): Promise<void> {
  await rolloutCommand(argv)
}
