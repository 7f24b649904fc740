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
let webAssemblyWanted = false
let webAssemblyDropped = false

/** What the isolates of the driver setting the flags need. */
export interface IsolateNeeds {
  /** Whether its contexts need the `WebAssembly` global (pyodide does); default true. */
  webAssembly?: boolean
}

/**
 * V8 flags for the isolates this process creates, set by each isolate driver's `check()`,
 * before its first isolate.
 *
 * - Without `--no-concurrent-recompilation` an isolate deleted while the process exits waits for
 *   optimizing-compiler tasks that Node's platform no longer runs, and `process.exit()` hangs
 *   (seen in about one exit in three with pyodide isolates). Optimization then runs on the
 *   isolate's own thread.
 * - A driver whose contexts get no WebAssembly (javascript: js-harness.js deletes it) has V8
 *   not build it at all in the contexts made from then on (`--no-expose-wasm --no-validate-asm`),
 *   a part of making a context that every job would pay (benchmarks/RESULTS.md, "Figures that
 *   were in code comments"). Unless a driver of this process wants
 *   WebAssembly (the default): then the flags are restored for good, whichever checked first.
 *   The flags reach every context made afterwards in this process, Node's own `vm` contexts too;
 *   the main context keeps its `WebAssembly` (undici's llhttp still compiles).
 */
export function setIsolateFlags(needs: IsolateNeeds = {}): void {
  if (!isolateFlagsSet) {
    isolateFlagsSet = true
    setFlagsFromString('--no-concurrent-recompilation')
  }
  if (needs.webAssembly === false) {
    if (webAssemblyWanted || webAssemblyDropped) return
    webAssemblyDropped = true
    setFlagsFromString('--no-expose-wasm')
    setFlagsFromString('--no-validate-asm')
  } else {
    webAssemblyWanted = true
    if (!webAssemblyDropped) return
    webAssemblyDropped = false
    setFlagsFromString('--expose-wasm')
    setFlagsFromString('--validate-asm')
  }
}

/** True when this process was started with `--no-node-snapshot` (on the command line or in NODE_OPTIONS). */
export function nodeSnapshotDisabled(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS
): boolean {
  if (execArgv.includes(NO_NODE_SNAPSHOT)) return true
  return (nodeOptions ?? '').split(/\s+/).includes(NO_NODE_SNAPSHOT)
}

/** The start-up message for a process that lacks the flag, naming how to fix it. */
export function snapshotFlagMessage(driver: string): string {
  return (
    `the ${driver} backend hosts V8 isolates (isolated-vm), which crash a Node process started from its start-up snapshot: ` +
    `start Node with ${NO_NODE_SNAPSHOT} (node ${NO_NODE_SNAPSHOT} …, or NODE_OPTIONS=${NO_NODE_SNAPSHOT}); ` +
    'bin/sandfleet.mjs and scripts/run-tests.mjs add it themselves'
  )
}
