/**
 * Which backend serves each language, and why: the embedder's driver when it gave one, else
 * Python's chosen by the `backend` setting (`auto`: the strongest whose `check()` passes), then
 * one driver per other language (`LANGUAGE_DRIVERS`); and where the session host runs.
 *
 * Every driver made here goes to the runner's parts before it is checked, so that release closes
 * it whatever happens next; the reason for the Python backend goes there as soon as it is known.
 */
import { LANGUAGES, type Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { RunnerConfig } from '../config.ts'
import type { Driver, DriverEvents } from '../sandbox/contract.ts'
import {
  choosePythonDriver,
  createDriver,
  hasDriver,
  LANGUAGE_DRIVERS,
  type RunnerDriverOptions
} from './driver-registry.ts'
import { RunnerError } from '../errors.ts'
import type { Logger } from '../logger.ts'
import type { SessionHostCommand } from '../sessions/session-host.ts'
import type { RunnerParts } from './runner-parts.ts'

/** What planning needs: the configuration, a logger, the embedder's driver if any, and the parts to fill. */
export interface PlanContext {
  runnerId: string
  config: RunnerConfig
  logger: Logger
  /** A driver given by the embedder (made, not yet checked): it serves the languages it declares. */
  given: Driver | undefined
  /** Every driver made is added to its `drivers`, checked or not; the reason goes to its `backendReason`. */
  parts: RunnerParts
  /** Where the drivers' events go. */
  events?: DriverEvents
}

/**
 * Chooses and checks the drivers; resolves with each language to serve and its driver, in the
 * order the pools are made. Rejects when the embedder's driver fails its check, when a language
 * asked for by `languages` has no working driver, or when nothing is left to serve.
 */
export async function planBackends(ctx: PlanContext): Promise<Array<[Language, Driver]>> {
  const { config, logger: log, runnerId, parts } = ctx
  const options: RunnerDriverOptions = {
    config,
    logger: log,
    ...(ctx.events === undefined ? {} : { events: ctx.events })
  }
  const wanted = config.languages.length > 0 ? new Set<Language>(config.languages) : undefined
  const serve = new Map<Language, Driver>()
  let primary: Driver | undefined
  if (ctx.given !== undefined) {
    primary = ctx.given
    parts.drivers.push(primary)
    await primary.check()
    parts.backendReason = `backend ${primary.name} (given by the embedder): ${primary.describe().boundary}`
  } else if (wanted === undefined || wanted.has('python')) {
    const choice = await choosePythonDriver(config.backend, options)
    primary = choice.driver
    parts.drivers.push(primary)
    parts.backendReason = choice.reason
  } else {
    parts.backendReason = 'no Python pool (languages configured without python)'
  }
  log.info({ runner: runnerId, backend: primary?.name }, parts.backendReason)
  for (const language of primary?.languages ?? []) {
    if (wanted === undefined || wanted.has(language)) serve.set(language, primary as Driver)
  }
  for (const language of LANGUAGES) {
    if (serve.has(language) || (wanted !== undefined && !wanted.has(language))) continue
    const name = LANGUAGE_DRIVERS[language]
    if (name === undefined || !hasDriver(name)) {
      if (wanted !== undefined)
        throw new RunnerError(
          'SF_ERR_RUNNER_DRIVER_UNAVAILABLE',
          `language ${language} was asked for, but no driver for it is available in this runner`
        )
      continue
    }
    const driver = await createDriver(name, options)
    parts.drivers.push(driver)
    try {
      await driver.check()
    } catch (err) {
      if (wanted !== undefined) throw err
      log.warn(
        { runner: runnerId, language, err: messageOf(err) },
        `not serving ${language}: its driver is unavailable`
      )
      continue
    }
    serve.set(language, driver)
  }
  if (serve.size === 0)
    throw new RunnerError(
      'SF_ERR_RUNNER_DRIVER_UNAVAILABLE',
      'no language to serve: the configured languages match no driver'
    )
  return [...serve]
}

/**
 * How the runner starts its session host: in a sandbox of the Python backend (`python`), or,
 * when that backend holds no sessions (docker, pyodide), under bubblewrap if the host has it.
 * Undefined: no sandbox can hold sessions here, and the session API answers SF_ERR_SESSION_DISABLED.
 */
export async function sessionHostCommand(
  python: Driver | undefined,
  ctx: PlanContext
): Promise<SessionHostCommand | undefined> {
  if (python?.sessionHost !== undefined) return python.sessionHost.bind(python)
  if (python === undefined || python.name === 'unsafe' || !hasDriver('process')) return undefined
  const fallback = await createDriver('process', { config: ctx.config, logger: ctx.logger })
  try {
    await fallback.check()
  } catch (err) {
    ctx.logger.info(
      { runner: ctx.runnerId, backend: python.name, err: messageOf(err) },
      `sessions disabled: the ${python.name} backend holds none and bubblewrap is not available`
    )
    await fallback.close()
    return undefined
  }
  ctx.parts.drivers.push(fallback)
  ctx.logger.info(
    { runner: ctx.runnerId, backend: python.name },
    `sessions run under bubblewrap (the ${python.name} backend holds none)`
  )
  return fallback.sessionHost?.bind(fallback)
}
