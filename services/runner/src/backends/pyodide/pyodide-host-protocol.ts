/**
 * The frames the pyodide driver (in the runner) and its host process exchange over the host's
 * fd 3 ({@link FramePipe}). The runner sends `init` once, then requests numbered `n`; the host
 * answers `ready` (or `fatal`) to `init` and one `reply` per request, in any order.
 */
import type { Job, RunOutcome } from '../../sandbox/contract.ts'

/** How the host prepares Pyodide (the runner's pyodide* settings and the sandboxes' graces). */
export interface HostInit {
  op: 'init'
  /** A zip of pure-Python packages ('' for none). */
  packagesZip: string
  preimport: readonly string[]
  warmup: string
  /** After the soft interrupt, how long the code has before its isolate is stopped hard. */
  softGraceMs: number
}

/** A request about one sandbox, by its id. */
export type HostRequest =
  { op: 'start'; sandbox: string } | { op: 'exec'; sandbox: string; job: Job } | { op: 'close'; sandbox: string }

/** What the runner sends. */
export type ToHost = HostInit | (HostRequest & { n: number })

/** The host's answer to one request. */
export interface HostReply {
  op: 'reply'
  n: number
  /** The request failed on the host's side (no such sandbox, a start that failed, a restore that failed). */
  error?: { message: string; code?: string }
  /** An `exec`'s outcome. */
  outcome?: RunOutcome
  /** Jobs the sandbox ran, and its isolate's memory as last measured (after the previous job). */
  stats?: { jobs: number; memoryBytes?: number }
}

/** The host booted Pyodide and takes requests. */
export interface HostReady {
  op: 'ready'
  pid: number
  /** The pyodide package's version. */
  pyodide: string
  /** Where its memory snapshot came from (`cache <path>` or `made in <ms> ms…`). */
  snapshot: string
  /**
   * How long its boot took, in ms: Node and the host's modules loaded (since the process started), Pyodide's files read
   * and its wasm compiled, the snapshot read or made.
   */
  bootMs: { loaded: number; assets: number; snapshot: number }
  /** What its sandboxes' Python is and can import (pyodide-manifest.ts). */
  manifest: { os: string; python: string; packages: Record<string, string> }
}

/** What the host sends. */
export type FromHost =
  HostReady | HostReply | { op: 'fatal'; message: string } | { op: 'log'; level: 'warn' | 'error'; message: string }
