import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { startFleetCpuMeter } from '../src/fleet-cpu.ts'

test("the fleet's CPU counts its whole process tree: a child that computed and exited is in its parent's reaped time", async () => {
  // A shell (the fleet's root) that runs a Python child computing 0.4 s of its own CPU, then waits for a line.
  const root = spawn(
    'sh',
    [
      '-c',
      'python3 -c "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"; echo done; read x'
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] }
  )
  try {
    const meter = startFleetCpuMeter({ pids: [root.pid as number] })
    await once(root.stdout, 'data')
    const used = await meter.stop()
    assert.ok(used.processesMs >= 350, `the child's 0.4 s of CPU is counted: ${used.processesMs} ms`)
    assert.equal(used.totalMs, used.processesMs)
    assert.equal(used.containersMs, undefined, 'no runner named: no containers read')
  } finally {
    root.kill('SIGKILL')
  }
})
