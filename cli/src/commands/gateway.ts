/**
 * `sandfleet gateway --runners URL,…`: the gateway alone, routing to runners elsewhere
 * (`--runners` or `--runners-dns host:port` for a headless Kubernetes service). Every setting of
 * the gateway is a flag (`--max-in-flight 512`) or a `SANDFLEET_*` variable.
 */
import { GatewayConfigSchema, closeOnSignals, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { commandHelp, configFlags, defineCommand, parseCommandLine } from '@sandfleet/command-line'

/** The command's flags: every key of the gateway's config. */
export const GATEWAY_COMMAND = defineCommand({
  name: 'sandfleet gateway',
  summary: 'The gateway alone, routing to runners elsewhere (--runners or --runners-dns).',
  flags: configFlags(GatewayConfigSchema)
})

/** Runs the command until SIGINT/SIGTERM. */
export async function gateway(argv: string[]): Promise<void> {
  const { values, help } = parseCommandLine(GATEWAY_COMMAND, argv)
  if (help) {
    console.log(commandHelp(GATEWAY_COMMAND))
    return
  }
  const config = loadGatewayConfig({ values })
  if (config.runners.length === 0 && config.runnersDns === '') {
    throw new Error(
      'no runners: pass --runners http://HOST:PORT,… or --runners-dns HOST:PORT (or run `sandfleet serve` for gateway and runner in one process)'
    )
  }
  const running = await startGateway({ config })
  running.app.log.info(
    { url: running.url, runners: config.runners, runnersDns: config.runnersDns },
    'sandfleet gateway serving'
  )
  closeOnSignals(() => running.close(), { info: (msg) => running.app.log.info(msg) })
}
