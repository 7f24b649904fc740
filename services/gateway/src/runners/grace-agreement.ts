/**
 * Whether a gateway's wait covers a runner's: an attempt waits for the runner's answer the queue
 * budget left + `timeout_ms` + `callGraceMs`, and a runner answers a job it started by
 * `timeout_ms` + its backends' stop (`stop_ms`) + its `graceMs` (`grace_ms`), both in its load
 * report. A gateway whose grace is not longer would count a runner that is still going to answer
 * unreachable, and answer `infra_error` where the runner's `timeout` was on its way.
 */
import type { RunnerLoad } from '@sandfleet/protocol'

/**
 * Why a wait of `callGraceMs` past `timeout_ms` does not cover the runner of `load`, naming both
 * settings; `undefined` when it does, or when the report does not say (an older runner).
 */
export function uncoveredGrace(callGraceMs: number, load: RunnerLoad): string | undefined {
  if (load.grace_ms === undefined) return undefined
  const stopMs = load.stop_ms ?? 0
  const lateMs = load.grace_ms + stopMs
  if (callGraceMs > lateMs) return undefined
  return (
    `runner ${load.runner} may answer ${lateMs} ms past timeout_ms (its graceMs ${load.grace_ms} + its backends' stop ${stopMs} ms), ` +
    `which this gateway's callGraceMs ${callGraceMs} (--call-grace-ms, SANDFLEET_CALL_GRACE_MS) does not cover: ` +
    `set callGraceMs above ${lateMs} (the transport's time on top), or the runner's graceMs (--grace-ms) below ${Math.max(0, callGraceMs - stopMs)}`
  )
}
