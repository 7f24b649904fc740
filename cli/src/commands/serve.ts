/** `sandfleet serve`: the gateway and a local runner in one process (the embedded default). */
import { InProcessRunnerClient, closeOnSignals, loadGatewayConfig, startGateway } from '@sandfleet/gateway'
import { Runner, readRunnerConfig } from '@sandfleet/runner'

/** Runs the command; gateway flags (--host, --port, …) and runner flags (--backend, …) mix. */
export async function serve (argv: string[]): Promise<void> {
  const { config: runnerConfig, rest } = readRunnerConfig({ argv, env: process.env, allowUnknownFlags: true })
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
  gateway.app.log.info({ url: gateway.url, isolation: runner.isolation() }, 'sandfleet serving')
  closeOnSignals(async () => { await gateway.close(); await runner.close() })
}
