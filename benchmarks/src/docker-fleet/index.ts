/**
 * The fleet as separate hosts in Docker, and checked load through its gateways: what the
 * multi-host benchmark (`benchmarks/src/fleet-hosts.ts`) and the multi-host suite
 * (`test/fleet-hosts.test.ts`) share. Exported as `@sandfleet/benchmarks/docker-fleet`.
 *
 * ```ts
 * import { DockerFleet, callLoad } from '@sandfleet/benchmarks/docker-fleet'
 * ```
 */
export { callLoad, gatewayRetries, quantile, type CallLoadOptions, type CallRecord } from './call-load.ts'
export {
  DockerFleet,
  get,
  readyRunners,
  waitFor,
  type DockerFleetOptions,
  type RunnerContainer
} from './docker-fleet.ts'
