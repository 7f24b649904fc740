/**
 * Which drivers this runner has, and how one is chosen.
 *
 * A backend is one file in `drivers/` plus one line in {@link DRIVER_FACTORIES}. The runner
 * keeps one pool per language: Python through the configured backend (`auto` picks the strongest
 * available), every other language through the driver named in {@link LANGUAGE_DRIVERS}, served
 * as soon as its factory is registered and its `check()` passes.
 */
import type { Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { RunnerConfig } from '../config.ts'
import { RunnerError } from '../errors.ts'
import type { Driver, DriverName, DriverOptions } from '../sandbox/contract.ts'

/**
 * What a driver is made with here: the runner's whole configuration, of which each driver reads the keys its backend
 * names.
 */
export type RunnerDriverOptions = DriverOptions<RunnerConfig>

/** Makes a driver (not checked yet). */
export type DriverFactory = (options: RunnerDriverOptions) => Driver | Promise<Driver>

/**
 * The drivers built into this runner, one line each, each imported when first used. To add a
 * backend: a folder `backends/<name>/` whose driver implements {@link Driver} and reads the
 * keys of the configuration its config file names, and its line here.
 */
export const DRIVER_FACTORIES: Partial<Record<DriverName, DriverFactory>> = {
  process: async (o) => new (await import('../backends/process/process-driver.ts')).ProcessDriver(o),
  docker: async (o) => (await import('../backends/docker/docker-driver.ts')).dockerDriver(o),
  pyodide: async (o) => new (await import('../backends/pyodide/pyodide-driver.ts')).PyodideDriver(o),
  javascript: async (o) => new (await import('../backends/javascript/javascript-driver.ts')).JavascriptDriver(o),
  unsafe: async (o) => new (await import('../backends/unsafe/unsafe-driver.ts')).UnsafeDriver(o)
}

/** Registers (or replaces) a driver at run time, for embedders and tests. */
export function registerDriver(name: DriverName, factory: DriverFactory): void {
  DRIVER_FACTORIES[name] = factory
}

/** The driver serving each language other than Python (Python uses the configured backend). */
export const LANGUAGE_DRIVERS: Readonly<Partial<Record<Language, DriverName>>> = Object.freeze({
  javascript: 'javascript'
})

/** Order in which `auto` tries backends: strongest isolation first. `unsafe` is never chosen. */
export const AUTO_ORDER: readonly DriverName[] = Object.freeze(['docker', 'process', 'pyodide'])

/** True when a factory for `name` is registered in this build. */
export function hasDriver(name: DriverName): boolean {
  return DRIVER_FACTORIES[name] !== undefined
}

/** Makes the named driver; throws `SF_ERR_RUNNER_DRIVER_UNAVAILABLE` when this build lacks it. */
export async function createDriver(name: DriverName, options: RunnerDriverOptions): Promise<Driver> {
  const factory = DRIVER_FACTORIES[name]
  if (factory === undefined) {
    const have = Object.keys(DRIVER_FACTORIES)
    throw new RunnerError(
      'SF_ERR_RUNNER_DRIVER_UNAVAILABLE',
      `backend "${name}" is not available in this runner (available: ${have.length > 0 ? have.join(', ') : 'none'})`
    )
  }
  return await factory(options)
}

/** A checked driver and why it was chosen, to print at start-up. */
export interface DriverChoice {
  driver: Driver
  /** One line, e.g. `auto: docker unavailable (engine not reachable); chose process`. */
  reason: string
}

/**
 * The strongest backend available: docker if its engine is reachable and the image present, else
 * process if bubblewrap and python3 are there, else pyodide. Each candidate's own `check()`
 * decides. Throws `SF_ERR_RUNNER_NO_BACKEND` listing why each was refused.
 */
export async function chooseAutoDriver(
  options: RunnerDriverOptions,
  order: readonly DriverName[] = AUTO_ORDER
): Promise<DriverChoice> {
  const refused: string[] = []
  for (const name of order) {
    if (!hasDriver(name)) {
      refused.push(`${name}: not built into this runner`)
      continue
    }
    let driver: Driver | undefined
    try {
      driver = await createDriver(name, options)
      await driver.check()
      const skipped = refused.length > 0 ? ` (${refused.join('; ')})` : ''
      return { driver, reason: `auto chose ${name}: ${driver.describe().boundary}${skipped}` }
    } catch (err) {
      refused.push(`${name}: ${messageOf(err)}`)
      await driver?.close().catch(() => {})
    }
  }
  throw new RunnerError('SF_ERR_RUNNER_NO_BACKEND', `no isolation backend is available: ${refused.join('; ')}`)
}

/**
 * The driver of the Python pool for a configured backend, checked. `unsafe` is honoured only
 * when named explicitly, and logs a warning that nothing is isolated.
 */
export async function choosePythonDriver(
  backend: RunnerConfig['backend'],
  options: RunnerDriverOptions
): Promise<DriverChoice> {
  if (backend === 'auto') return await chooseAutoDriver(options)
  const driver = await createDriver(backend, options)
  try {
    await driver.check()
  } catch (err) {
    await driver.close().catch(() => {})
    throw err
  }
  if (backend === 'unsafe') {
    options.logger.warn(
      { backend },
      'UNSAFE backend: user code runs on this host with NO isolation (no namespaces, no network block). Use it only for development.'
    )
  }
  return { driver, reason: `backend ${backend} (configured): ${driver.describe().boundary}` }
}
