/** `sandfleet serve`: the gateway and a local runner in one process (the embedded default). */
import { InProcessRunnerClient, closeOnSignals, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { Runner, readRunnerConfig } from '@sandfleet/runner'

/** Runs the command; gateway flags (--host, --port, …) and runner flags (--backend, …) mix. */
export async function serve (argv: string[]): Promise<void> {
  // The in-process runner does not listen: --host and --port are the gateway's.
  const { gatewayArgs, runnerArgs } = splitListenFlags(argv)
  const { config: runnerConfig, rest } = readRunnerConfig({ argv: runnerArgs, env: process.env, allowUnknownFlags: true })
  rest.push(...gatewayArgs)
  const values: Record<string, unknown> = {}
  for (let i = 0; i < rest.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(rest[i])
    if (m === null) throw new Error(`unexpected argument ${rest[i]}`)
    const key = m[1].replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())
    values[key] = m[2] ?? rest[++i]
  }
  const config = loadGatewayConfig({ values })
  const runner = new Runner(runnerConfig)
  await runner.start()
  const gateway = await startGateway({ config, clients: [new InProcessRunnerClient(runner)], registries: [runner.registry] })
  gateway.app.log.info({ url: gateway.url, backend: runner.backendReason, languages: runner.languages, isolation: runner.isolation() }, 'sandfleet serving')
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
