import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DRIVER_FACTORIES, registerDriver } from '../../../src/runner/driver-registry.ts'
import type { Driver, DriverName } from '../../../src/sandbox/contract.ts'
import { Runner } from '../../../src/runner/runner.ts'
import { runnerConfig } from '../../../src/config.ts'

/** A backend whose check() fails the way it does on a machine without it. */
function missing(name: DriverName, why: string): () => Driver {
  return () => ({
    name,
    languages: ['python'],
    check: async () => {
      throw new Error(why)
    },
    createSandbox: () => {
      throw new Error('unreachable')
    },
    describe: () => ({ driver: name, boundary: name, properties: [] }),
    close: async () => {}
  })
}

test('auto on a machine without Docker or bubblewrap serves Python through pyodide, and says why', async () => {
  const saved = { ...DRIVER_FACTORIES }
  registerDriver('docker', missing('docker', 'engine not reachable'))
  registerDriver('process', missing('process', 'bwrap is not runnable'))
  const runner = new Runner(runnerConfig({ backend: 'auto', poolSize: 1 }))
  try {
    await runner.start()
    assert.match(
      runner.backendReason,
      /^auto chose pyodide: .*docker: engine not reachable; process: bwrap is not runnable/
    )
    assert.deepEqual(runner.languages.sort(), ['javascript', 'python'])
    const py = await runner.execute({ code: 'import sys; print(sys.platform)' })
    assert.deepEqual([py.status, py.stdout], ['ok', 'emscripten\n'])
    const js = await runner.execute({ language: 'javascript', code: 'console.log(typeof require)' })
    assert.deepEqual([js.status, js.stdout], ['ok', 'undefined\n'])
  } finally {
    await runner.close()
    Object.assign(DRIVER_FACTORIES, saved)
  }
})
