/**
 * What a runner is made of once started: a pool per language it serves, the drivers behind them,
 * its session host, and why its Python backend was chosen. Filled in as start-up goes (so a start
 * that fails releases what it had made), read by the reports.
 */
import type { Language } from '@sandfleet/protocol'
import type { Driver } from '../sandbox/contract.ts'
import type { Pool } from '../pool/pool.ts'
import type { SessionHost } from '../sessions/session-host.ts'
import type { SessionSandboxes } from '../sessions/session-sandboxes.ts'

/** The parts of a runner; see the module comment. */
export interface RunnerParts {
  /** One pool per language served. */
  readonly pools: Map<Language, Pool>
  /** Every driver made, checked or not, the first the Python backend's when there is one: each is closed at release. */
  readonly drivers: Driver[]
  /** The stateful sessions, when `maxSessions` > 0 and a sandbox can hold them. */
  sessions: SessionHost | undefined
  /** The sandboxes, sessions of {@link sessions} with files, processes and code contexts. */
  sandboxes: SessionSandboxes | undefined
  /** Which backend the Python pool uses and why. */
  backendReason: string
}

/** Parts with nothing in them yet (a runner before start). */
export function noParts(): RunnerParts {
  return { pools: new Map(), drivers: [], sessions: undefined, sandboxes: undefined, backendReason: '' }
}
