/**
 * Putting a runner together at start-up and taking it apart at close: the backends planned
 * (`backend-plan.ts`), a pool made per language from the configuration, the session host, the
 * metrics attached, every pool warmed; then, at close, sessions shut down, pools drained and
 * closed, drivers closed.
 */
import type { Language } from '@sandfleet/protocol'
import { messageOf } from '@sandfleet/protocol/http'
import type { Driver } from '../sandbox/contract.ts'
import type { RunnerConfig } from '../config.ts'

import type { Logger } from '../logger.ts'
import type { RunnerMetrics } from '../metrics.ts'
import { Pool } from '../pool/pool.ts'
import { SessionHost } from '../sessions/session-host.ts'
import { planBackends, sessionHostCommand } from './backend-plan.ts'
import type { RunnerParts } from './runner-parts.ts'

/** What assembly needs of the runner. */
export interface AssemblyContext {
  runnerId: string
  config: RunnerConfig
  logger: Logger
  metrics: RunnerMetrics
  /** The embedder's driver, if it gave one. */
  given: Driver | undefined
}

/**
 * Fills `parts` and warms every pool; resolves when each pool has a sandbox ready. Rejects when
 * no backend fits or no sandbox starts, leaving in `parts` what it made (for {@link release}).
 */
export async function assemble(parts: RunnerParts, ctx: AssemblyContext): Promise<void> {
  const { config, runnerId } = ctx
  const plan = { runnerId, config, logger: ctx.logger, given: ctx.given, parts, events: { reuse: ctx.metrics.reuse } }
  for (const [language, driver] of await planBackends(plan)) parts.pools.set(language, makePool(language, driver, ctx))
  const command = config.maxSessions > 0 ? await sessionHostCommand(parts.pools.get('python')?.driver, plan) : undefined
  if (command !== undefined) {
    parts.sessions = new SessionHost({ runnerId, config, command })
  }
  ctx.metrics.attach([...parts.pools.values()])
  await Promise.all(
    [...parts.pools.values()].map(async (pool) => {
      await pool.start()
    })
  )
}

/**
 * A language's pool, sized by the configuration and capped by its driver's `maxPoolSize`; its rare events go to the
 * metrics.
 */
function makePool(language: Language, driver: Driver, ctx: AssemblyContext): Pool {
  const c = ctx.config
  const pool: Pool = new Pool({
    driver,
    language,
    runnerId: ctx.runnerId,
    size: Math.min(c.poolSize, driver.maxPoolSize ?? Infinity),
    maxJobsPerSandbox: c.maxJobsPerSandbox,
    maxQueuedJobs: c.maxQueuedJobs,
    replaceBackoffMs: c.replaceBackoffMs,
    replaceBackoffMaxMs: c.replaceBackoffMaxMs,
    graceMs: c.graceMs,
    logger: ctx.logger,
    events: {
      replaced: (reason, ms) => {
        ctx.metrics.replaced(pool, reason, ms)
      },
      startFailed: () => {
        ctx.metrics.startFailed(pool)
      }
    }
  })
  return pool
}

/**
 * Shuts the sessions down, drains each pool for `drainTimeoutMs` and closes it, then closes every driver (a failure is
 * logged).
 */
export async function release(
  parts: RunnerParts,
  ctx: Pick<AssemblyContext, 'runnerId' | 'logger'>,
  drainTimeoutMs = 0
): Promise<void> {
  await parts.sessions?.shutdown()
  await Promise.all(
    [...parts.pools.values()].map(async (pool) => {
      await pool.close(drainTimeoutMs)
    })
  )
  await Promise.all(
    parts.drivers.map(async (driver) => {
      try {
        await driver.close()
      } catch (err) {
        ctx.logger.warn({ runner: ctx.runnerId, driver: driver.name, err: messageOf(err) }, 'driver close failed')
      }
    })
  )
}
