/**
 * The Node flag isolated-vm needs. On Node 20+, an isolate created in a process started from
 * Node's start-up snapshot crashes the process, so every process that hosts isolates (the
 * runner, `sandfleet serve`, the tests) must run with `--no-node-snapshot`. Drivers check it in
 * `check()` before they load isolated-vm, so a missing flag is a clear start-up error, never a crash.
 */

import { setFlagsFromString } from 'node:v8'

/** The flag. */
export const NO_NODE_SNAPSHOT = '--no-node-snapshot'

let isolateFlagsSet = false

/**
 * V8 flags for the isolates this process creates, set once before the first one. Without
 * `--no-concurrent-recompilation` an isolate deleted while the process exits waits for
 * optimizing-compiler tasks that Node's platform no longer runs, and `process.exit()` hangs
 * (seen in about one exit in three with pyodide isolates). Optimization then runs on the
 * isolate's own thread.
 */
export function setIsolateFlags (): void {
  if (isolateFlagsSet) return
  isolateFlagsSet = true
  setFlagsFromString('--no-concurrent-recompilation')
}

/** True when this process was started with `--no-node-snapshot` (on the command line or in NODE_OPTIONS). */
export function nodeSnapshotDisabled (execArgv: readonly string[] = process.execArgv, nodeOptions: string | undefined = process.env.NODE_OPTIONS): boolean {
  if (execArgv.includes(NO_NODE_SNAPSHOT)) return true
  return (nodeOptions ?? '').split(/\s+/).includes(NO_NODE_SNAPSHOT)
}

/** The start-up message for a process that lacks the flag, naming how to fix it. */
export function snapshotFlagMessage (driver: string): string {
  return `the ${driver} backend hosts V8 isolates (isolated-vm), which crash a Node process started from its start-up snapshot: ` +
    `start Node with ${NO_NODE_SNAPSHOT} (node ${NO_NODE_SNAPSHOT} …, or NODE_OPTIONS=${NO_NODE_SNAPSHOT}); ` +
    'bin/sandfleet.mjs and scripts/run-tests.mjs add it themselves'
}
