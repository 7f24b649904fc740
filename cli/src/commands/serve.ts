/** `sandfleet serve`: the gateway and a local runner in one process (the embedded default). */
import { InProcessRunnerClient, closeOnSignals, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { pino } from 'pino'
import { Runner, readRunnerConfig } from '@sandfleet/runner'
import { gatewayValues } from '../flags.ts'

/** Runs the command; gateway flags (--host, --port, …) and runner flags (--backend, …) mix. */
export async function serve (argv: string[]): Promise<void> {
  const { gatewayArgs, runnerArgs } = splitServeFlags(argv)
  const { config: runnerConfig, rest } = readRunnerConfig({ argv: runnerArgs, env: process.env, allowUnknownFlags: true })
  const values = gatewayValues([...rest, ...gatewayArgs])
  const config = loadGatewayConfig({ values })
  // One logger for both halves, so the runner's start-up warnings (the unsafe backend) show.
  const logger = pino({ level: config.logLevel })
  const runner = new Runner(runnerConfig, { logger })
  // The gateway's app is built while the sandboxes warm; it listens once the runner is ready.
  const started = runner.start()
  const gateway = await startGateway({ config, logger, clients: [new InProcessRunnerClient(runner)], registries: [runner.registry], component: 'serve', after: started })
    .catch(async (err: unknown) => { await started.catch(() => {}); await runner.close(); throw err })
  gateway.app.log.info({ url: gateway.url, languages: runner.languages, isolation: runner.isolation() }, `sandfleet serving on ${gateway.url}; ${runner.backendReason}`)
  closeOnSignals(async () => { await gateway.close(); await runner.close() })
}

/** Flags of the gateway alone (the in-process runner does not listen). */
const GATEWAY_ONLY = /^--(host|port)(=|$)/
/** Flags both halves take: the queue timeout (the gateway's budget for a call and the runner's cap) and the log level of their one logger. */
const BOTH = /^--(queue-timeout-ms|log-level)(=|$)/

/**
 * Splits `argv` between the halves: `--host`/`--port` (with `=value` or a separate value) to the
 * gateway, `--queue-timeout-ms` and `--log-level` to both (as their `SANDFLEET_*` variables reach
 * both), the rest to the runner.
 */
export function splitServeFlags (argv: string[]): { gatewayArgs: string[], runnerArgs: string[] } {
  const gatewayArgs: string[] = []
  const runnerArgs: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const gateway = GATEWAY_ONLY.test(arg)
    const both = BOTH.test(arg)
    if (!gateway && !both) { runnerArgs.push(arg); continue }
    const flag = !arg.includes('=') && i + 1 < argv.length ? [arg, argv[++i]] : [arg]
    gatewayArgs.push(...flag)
    if (both) runnerArgs.push(...flag)
  }
  return { gatewayArgs, runnerArgs }
}
