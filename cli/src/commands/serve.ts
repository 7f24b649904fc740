/** `sandfleet serve`: the gateway and a local runner in one process (the embedded default). */
import { InProcessRunnerClient, closeOnSignals, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { pino } from 'pino'
import { Runner, readRunnerConfig } from '@sandfleet/runner'
import { gatewayValues } from '../flags.ts'

/** Runs the command; gateway flags (--host, --port, …) and runner flags (--backend, …) mix. */
export async function serve (argv: string[]): Promise<void> {
  // The in-process runner does not listen: --host and --port are the gateway's.
  const { gatewayArgs, runnerArgs } = splitListenFlags(argv)
  const { config: runnerConfig, rest } = readRunnerConfig({ argv: runnerArgs, env: process.env, allowUnknownFlags: true })
  const values = gatewayValues([...rest, ...gatewayArgs])
  const config = loadGatewayConfig({ values })
  // One logger for both halves, so the runner's start-up warnings (the unsafe backend) show.
  const logger = pino({ level: config.logLevel })
  const runner = new Runner(runnerConfig, { logger })
  await runner.start()
  const gateway = await startGateway({ config, logger, clients: [new InProcessRunnerClient(runner)], registries: [runner.registry] })
  gateway.app.log.info({ url: gateway.url, languages: runner.languages, isolation: runner.isolation() }, `sandfleet serving on ${gateway.url}; ${runner.backendReason}`)
  closeOnSignals(async () => { await gateway.close(); await runner.close() })
}

/** Takes `--host`/`--port` (with `=value` or a separate value) out of `argv`. */
export function splitListenFlags (argv: string[]): { gatewayArgs: string[], runnerArgs: string[] } {
  const gatewayArgs: string[] = []
  const runnerArgs: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (/^--(host|port)(=|$)/.test(arg)) {
      gatewayArgs.push(arg)
      if (!arg.includes('=') && i + 1 < argv.length) gatewayArgs.push(argv[++i])
    } else {
      runnerArgs.push(arg)
    }
  }
  return { gatewayArgs, runnerArgs }
}
