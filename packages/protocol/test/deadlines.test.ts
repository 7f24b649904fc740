import { test } from 'node:test'
import assert from 'node:assert/strict'
import { GRACES, QUEUE_TIMEOUT_MS } from '@sandfleet/protocol'

test("the default waits keep their order: each layer's wait covers the one inside it", () => {
  // the longest stop a backend of the fleet takes past timeout_ms: pyodide's soft stop and host slack
  const longestStopMs = GRACES.softStopMs + GRACES.pyodideHostSlackMs
  assert.ok(
    GRACES.callMs > GRACES.sandboxMs + longestStopMs,
    "the gateway waits past a runner's grace and its backends' stop"
  )
  assert.ok(
    GRACES.clientSlackMs > QUEUE_TIMEOUT_MS + GRACES.callMs,
    "the client waits past a gateway's queue budget and grace"
  )
})
