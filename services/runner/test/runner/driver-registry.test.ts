import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  chooseAutoDriver,
  choosePythonDriver,
  createDriver,
  DRIVER_FACTORIES,
  registerDriver,
  type RunnerDriverOptions
} from '../../src/runner/driver-registry.ts'
import type { DriverName } from '../../src/sandbox/contract.ts'
import { runnerConfig } from '../../src/config.ts'
import { ScriptedDriver } from '../helpers/scripted-driver.ts'

/** A driver named `name` whose check() passes or fails. */
function fake(name: DriverName, failure?: string): ScriptedDriver {
  const d = new ScriptedDriver()
  Object.defineProperty(d, 'name', { value: name })
  d.check = async () => {
    if (failure !== undefined) throw new Error(failure)
  }
  return d
}

async function withFactories(
  entries: Partial<Record<DriverName, () => ScriptedDriver>>,
  fn: () => Promise<void>
): Promise<void> {
  const saved = { ...DRIVER_FACTORIES }
  for (const key of Object.keys(DRIVER_FACTORIES) as DriverName[]) Reflect.deleteProperty(DRIVER_FACTORIES, key)
  for (const [name, make] of Object.entries(entries)) registerDriver(name as DriverName, make)
  try {
    await fn()
  } finally {
    for (const key of Object.keys(DRIVER_FACTORIES) as DriverName[]) Reflect.deleteProperty(DRIVER_FACTORIES, key)
    Object.assign(DRIVER_FACTORIES, saved)
  }
}

const warnings: string[] = []
const options: RunnerDriverOptions = {
  config: runnerConfig(),
  logger: {
    debug() {},
    info() {},
    error() {},
    warn(_f, m) {
      warnings.push(m ?? '')
    }
  }
}

test('drivers: auto takes docker when its check passes', async () => {
  await withFactories({ docker: () => fake('docker'), process: () => fake('process') }, async () => {
    const choice = await chooseAutoDriver(options)
    assert.equal(choice.driver.name, 'docker')
    assert.match(choice.reason, /^auto chose docker/)
  })
})

test('drivers: auto falls back to process and says why docker was refused', async () => {
  await withFactories(
    { docker: () => fake('docker', 'engine not reachable'), process: () => fake('process') },
    async () => {
      const choice = await chooseAutoDriver(options)
      assert.equal(choice.driver.name, 'process')
      assert.match(choice.reason, /docker: engine not reachable/)
    }
  )
})

test('drivers: auto never picks unsafe, and fails listing every refusal', async () => {
  await withFactories(
    { unsafe: () => fake('unsafe'), process: () => fake('process', 'bubblewrap not found') },
    async () => {
      await assert.rejects(chooseAutoDriver(options), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'SF_ERR_RUNNER_NO_BACKEND')
        assert.match(err.message, /docker: not built into this runner/)
        assert.match(err.message, /process: bubblewrap not found/)
        return true
      })
    }
  )
})

test('drivers: unsafe is used only when named, with a warning', async () => {
  await withFactories({ unsafe: () => fake('unsafe') }, async () => {
    warnings.length = 0
    const choice = await choosePythonDriver('unsafe', options)
    assert.equal(choice.driver.name, 'unsafe')
    assert.ok(warnings.some((w) => /NO isolation/.test(w)))
  })
})

test('drivers: an unknown backend says what is available', async () => {
  await withFactories({ process: () => fake('process') }, async () => {
    await assert.rejects(
      createDriver('pyodide', options),
      /backend "pyodide" is not available in this runner \(available: process\)/
    )
  })
})

test("drivers: the docker factory replaces a container after the runner's --max-jobs-per-sandbox jobs, not a K of its own", async () => {
  const factory = DRIVER_FACTORIES.docker
  assert.ok(factory !== undefined)
  const driver = (await factory({ ...options, config: runnerConfig({ maxJobsPerSandbox: 7 }) })) as unknown as {
    options: { jobsPerContainer: number }
    describe: () => { properties: string[] }
    close: () => Promise<void>
  }
  try {
    assert.equal(driver.options.jobsPerContainer, 7)
    assert.ok(
      driver.describe().properties.some((p) => p.includes('at most 7 jobs a container')),
      JSON.stringify(driver.describe().properties)
    )
    const defaults = (await factory(options)) as unknown as {
      options: { jobsPerContainer: number }
      close: () => Promise<void>
    }
    assert.equal(defaults.options.jobsPerContainer, runnerConfig().maxJobsPerSandbox)
    await defaults.close()
  } finally {
    await driver.close()
  }
})
