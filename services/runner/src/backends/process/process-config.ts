/**
 * What the process backend (and the unsafe one, its executor without bubblewrap) reads of the runner's configuration;
 * config.ts defines these keys.
 */
import type { IsolationLevel } from '@sandfleet/protocol'

/** The executor the sandboxes run, and the Python that runs it. */
export interface ExecutorSettings {
  /** Path of executor.py ('': the one shipped in sandbox-images/python). */
  readonly executorPath: string
  /** The Python interpreter. */
  readonly pythonPath: string
  /** The isolation level of jobs that name none. */
  readonly isolation: IsolationLevel
}

/** What the process driver reads. */
export interface ProcessSettings extends ExecutorSettings {
  /** The runner's id (names its cgroups). */
  readonly id: string
  /** A whole sandbox's memory limit (0: maxMemoryMb plus headroom). */
  readonly sandboxMemoryMb: number
  /** The largest memory_mb a job may ask. */
  readonly maxMemoryMb: number
  /** A whole sandbox's process limit (0: none). */
  readonly sandboxPids: number
}
