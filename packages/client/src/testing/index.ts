/**
 * `@sandfleet/client/testing`: a fake fleet speaking the public API over real HTTP, for tests of
 * code built on the client when no fleet runs.
 *
 * @example
 * ```ts
 * import { startFakeFleet, errorReply } from '@sandfleet/client/testing'
 * const fleet = await startFakeFleet((req, ctx) => ctx.attempt === 1
 *   ? errorReply(429, 'overloaded', 'SF_ERR_RUNNER_OVERLOADED', 'busy', { 'retry-after': '0' })
 *   : { ...okResult, stdout: 'hi\n' })
 * // … new SandfleetClient({ url: fleet.url }) …
 * await fleet.close()
 * ```
 */
export {
  startFakeFleet,
  pythonBehavior,
  errorReply,
  type FakeFleet,
  type FakeBehavior,
  type FakeCallContext,
  type FakeHttpReply,
  type FakeLogEntry,
  type FakeFleetOptions
} from './fake-fleet.ts'
export { pythonJudge, type FakeJudgeBehavior, type RunPython } from './fake-judge.ts'
