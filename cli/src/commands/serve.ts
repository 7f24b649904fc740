/** `sandfleet serve`: the gateway and a local runner in one process (the embedded default). */
import {
  GatewayConfigSchema,
  InProcessRunnerClient,
  closeOnSignals,
  loadGatewayConfig,
  startGateway
} from '@sandfleet/gateway'
import { pino } from 'pino'
import { commandHelp, configFlags, defineCommand, parseCommandLine } from '@sandfleet/command-line'
import { RUNNER_COMMAND, Runner, RunnerConfigSchema, readRunnerConfig } from '@sandfleet/runner'

/** Keys of the gateway alone (the in-process runner does not listen). */
const GATEWAY_ONLY = ['host', 'port']
/**
 * Keys both halves take: the queue timeout (the gateway's budget for a call and the runner's
 * cap), the log level of their one logger, and the request limits the gateway holds at its edge
 * and the runner again (one --max-body-bytes, one --max-code-bytes).
 */
const BOTH = ['queueTimeoutMs', 'logLevel', 'maxBodyBytes', 'maxCodeBytes']
const RUNNER_KEYS = Object.keys(RunnerConfigSchema.properties)

/** The command's flags: the gateway's --host and --port, the runner's settings, then the gateway's others. */
export const SERVE_COMMAND = defineCommand({
  name: 'sandfleet serve',
  summary:
    "The gateway and a local runner in one process (the default command). A setting both halves have goes to the runner, except --host and --port (the gateway's), --queue-timeout-ms, --log-level, --max-body-bytes and --max-code-bytes (both).",
  flags: {
    ...configFlags(GatewayConfigSchema, { only: GATEWAY_ONLY }),
    ...Object.fromEntries(Object.entries(RUNNER_COMMAND.flags).filter(([name]) => !['host', 'port'].includes(name))),
    ...configFlags(GatewayConfigSchema, { except: RUNNER_KEYS })
  }
})

/**
 * Splits read values between the halves: --host/--port to the gateway, the keys of BOTH to both, a runner setting to
 * the runner, the rest to the gateway.
 */
export function splitServeValues(values: Readonly<Record<string, unknown>>): {
  gateway: Record<string, unknown>
  runner: Record<string, unknown>
} {
  const gateway: Record<string, unknown> = {}
  const runner: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(values)) {
    if (GATEWAY_ONLY.includes(key) || BOTH.includes(key) || !RUNNER_KEYS.includes(key)) gateway[key] = value
    if (!GATEWAY_ONLY.includes(key) && RUNNER_KEYS.includes(key)) runner[key] = value
  }
  return { gateway, runner }
}

/** Runs the command. */
export async function serve(argv: string[]): Promise<void> {
  const { values, help } = parseCommandLine(SERVE_COMMAND, argv)
  if (help) {
    console.log(commandHelp(SERVE_COMMAND))
    return
  }
  const split = splitServeValues(values)
  const { config: runnerConfig } = readRunnerConfig({ values: split.runner, env: process.env })
  const config = loadGatewayConfig({ values: split.gateway })
  // One logger for both halves, so the runner's start-up warnings (the unsafe backend) show.
  const logger = pino({ level: config.logLevel })
  const runner = new Runner(runnerConfig, { logger })
  // The gateway's app is built while the sandboxes warm; it listens once the runner is ready.
  const started = runner.start()
  const gateway = await startGateway({
    config,
    logger,
    clients: [new InProcessRunnerClient(runner)],
    registries: [runner.registry],
    component: 'serve',
    after: started
  }).catch(async (err: unknown) => {
    await started.catch(() => {})
    await runner.close()
    throw err
  })
  gateway.app.log.info(
    { url: gateway.url, languages: runner.languages, isolation: runner.isolation() },
    `sandfleet serving on ${gateway.url}; ${runner.backendReason}`
  )
  closeOnSignals(async () => {
    await gateway.close()
    await runner.close()
  })
}
