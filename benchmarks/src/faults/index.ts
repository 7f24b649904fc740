/**
 * Issue 44's faults, done to a fleet of processes of this checkout: what the fault benchmark
 * (`benchmarks/src/faults/fault-table.ts`) and the fault suite (`test/faults.test.ts`) share.
 * Exported as `@sandfleet/benchmarks/faults`.
 *
 * ```ts
 * import { FaultFleet, faultFleetProblem } from '@sandfleet/benchmarks/faults'
 * ```
 */
export {
  FaultFleet,
  faultFleetProblem,
  processTree,
  type FaultFleetOptions,
  type FleetProcess
} from './process-fleet.ts'
export { okRuns, type FaultRun, runFault, type FaultRunOptions } from './fault-run.ts'
