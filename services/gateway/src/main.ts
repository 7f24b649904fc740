/**
 * Runs a gateway: builds the app, listens, and closes cleanly on SIGINT/SIGTERM. The CLI's
 * `sandfleet gateway` and `sandfleet serve` call {@link startGateway}.
 */
import { buildGatewayApp, type GatewayApp, type GatewayOptions } from './app.ts'
import { isLoopbackHost } from './config.ts'

/** A listening gateway. */
export interface RunningGateway extends GatewayApp {
  /** `http://host:port` it listens on. */
  url: string
  /** Stops listening, waits for calls in flight, closes runner connections. Idempotent. */
  close(): Promise<void>
}

/** Options of {@link startGateway}. */
export interface StartOptions extends GatewayOptions {
  /**
   * Listen only once this settles: `sandfleet serve` passes its local runner's start, so that
   * building the app (routes, schemas, validators) overlaps the sandboxes' warm-up. When it
   * rejects, the app is closed and the rejection is thrown.
   */
  after?: Promise<unknown>
}

/** Builds and starts a gateway on `config.host:config.port`. */
export async function startGateway(options: StartOptions): Promise<RunningGateway> {
  // Observed from the start: a rejection during the build is not an unhandled one.
  const after = options.after?.then(
    () => undefined,
    (err: unknown) => err ?? new Error('start aborted')
  )
  const gateway = await buildGatewayApp(options)
  const { app } = gateway
  try {
    await app.ready()
    const failed = await after
    if (failed !== undefined) throw failed
    // The loads polled at ready came before `after`: poll again, so /readyz is true on listen.
    if (options.after !== undefined) await gateway.runners.poll()
  } catch (err) {
    await app.close()
    throw err
  }
  await app.listen({ host: options.config.host, port: options.config.port, backlog: options.config.listenBacklog })
  const address = app.server.address()
  const port = typeof address === 'object' && address !== null ? address.port : options.config.port
  logAuth(gateway, options.config.host)
  let closing: Promise<void> | undefined
  return { ...gateway, url: `http://${options.config.host}:${port}`, close: () => (closing ??= app.close()) }
}

/** Closes `close()` on the first SIGINT or SIGTERM, then exits; a second signal exits at once. */
export function closeOnSignals(close: () => Promise<void>, log: { info(msg: string): void } = console): void {
  let stopping = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) process.exit(1)
    stopping = true
    log.info(`${signal}: shutting down`)
    close().then(
      () => process.exit(0),
      () => process.exit(1)
    )
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
}

/** Says at start who may call: the tenants of the API keys, or, without keys, that anyone who reaches `host` may. */
function logAuth({ app, tenants }: GatewayApp, host: string): void {
  if (tenants.length > 0) {
    app.log.info(
      { tenants: tenants.map((t) => t.name) },
      `API keys: ${tenants.length} tenant(s), each with its own quotas`
    )
  } else if (isLoopbackHost(host)) {
    app.log.info(`no API keys: serving without authentication on the loopback address ${host} only`)
  } else {
    app.log.warn(`no API keys and allowUnauthenticated: anyone who reaches ${host} may run code`)
  }
}
