/**
 * `sandfleet runner`: reads the configuration (flags and SANDFLEET_* env), starts the runner,
 * listens, and on SIGINT/SIGTERM drains (readiness false, new jobs refused as retriable, jobs in
 * flight finish, up to `drainTimeoutMs`; sandboxes torn down; then the server closes) before
 * exiting 0. A second signal exits at once.
 */
import { pathToFileURL } from 'node:url'
import { pino } from 'pino'
import type { FastifyInstance } from 'fastify'
import { messageOf } from '@sandfleet/protocol/http'
import { buildRunnerApp } from './app.ts'
import { commandHelp, parseCommandLine } from '@sandfleet/command-line'
import { RUNNER_COMMAND, parseRunnerConfig, type RunnerConfig } from './config.ts'
import { ConfigError } from './errors.ts'
import { Runner } from './runner/runner.ts'
import type { Logger } from './logger.ts'

/** A started, listening runner. */
export interface RunnerServer {
  runner: Runner
  app: FastifyInstance
  /** `http://host:port` it listens on. */
  url: string
  /**
   * Drains, then stops listening (idempotent): the runner says `draining` (on `/readyz` and its
   * load report, so gateways stop sending) and answers new jobs `infra_error`
   * SF_ERR_RUNNER_DRAINING (retried elsewhere) while the jobs it holds finish and their
   * answers go out on connections still open; then its sandboxes are torn down, and only then
   * the server closes.
   */
  close: () => Promise<void>
}

/** Starts a runner and its internal API on `config.host:config.port`. */
export async function listenRunner(
  config: RunnerConfig,
  options: { logger?: Logger & object } = {}
): Promise<RunnerServer> {
  const logger = options.logger ?? pino({ level: config.logLevel })
  // A runner serving its own /metrics is a process of its own: it exports the process metrics.
  const runner = new Runner(config, { logger, processMetrics: true })
  await runner.start()
  const app = buildRunnerApp(runner, { logger })
  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (err) {
    await runner.close()
    throw err
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : config.port
  let closing: Promise<void> | undefined
  return {
    runner,
    app,
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`,
    close: async () => {
      // Every job is answered once the runner has drained; gateways' keep-alive connections
      // (polled every few hundred ms) would otherwise hold the close for Fastify's 72 s keep-alive.
      closing ??= runner.close().finally(async () => {
        const closed = app.close()
        app.server.closeIdleConnections()
        setTimeout(() => {
          app.server.closeAllConnections()
        }, 1000).unref()
        await closed
      })
      await closing
    }
  }
}

/** The `sandfleet runner` command: exits 0 after a graceful drain, 1 on a bad config or start failure. */
export async function main(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env
): Promise<void> {
  let config: RunnerConfig
  try {
    if (parseCommandLine(RUNNER_COMMAND, argv, undefined, { passUnknown: true }).help) {
      process.stdout.write(`${commandHelp(RUNNER_COMMAND)}\n`)
      return
    }
    config = parseRunnerConfig({ argv, env })
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : messageOf(err)}\n`)
    process.exit(1)
  }
  const logger = pino({ level: config.logLevel })
  let server: RunnerServer
  try {
    server = await listenRunner(config, { logger })
  } catch (err) {
    logger.fatal({ err: messageOf(err) }, `runner failed to start: ${messageOf(err)}`)
    process.exit(1)
  }
  logger.info(
    { url: server.url, runner: server.runner.id },
    `runner listening on ${server.url}; ${server.runner.backendReason}`
  )
  let signals = 0
  const stop = (signal: string): void => {
    if (++signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    logger.info({ signal, drainTimeoutMs: config.drainTimeoutMs }, 'draining')
    server.close().then(
      () => {
        logger.info({}, 'runner stopped')
        process.exit(0)
      },
      (err: unknown) => {
        logger.error({ err: messageOf(err) }, 'drain failed')
        process.exit(1)
      }
    )
  }
  process.on('SIGINT', () => {
    stop('SIGINT')
  })
  process.on('SIGTERM', () => {
    stop('SIGTERM')
  })
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main()
