/**
 * A checkout's gateway and runner in one process, as `sandfleet serve` runs them, with sandboxes
 * that answer every job at once (on the next turn of the event loop, `ok`, the stdout of
 * `print(1+1)`): what is left to measure is the node path alone (HTTP, Fastify, admission,
 * routing, the in-process runner, the queue and pool, metrics, the response), which a real
 * sandbox's own CPU hides. serve-ab runs one per checkout with `SANDFLEET_AB_SANDBOX=instant`.
 *
 * It imports the checkout's own `services/runner` and `services/gateway` entry points by path
 * (resolving their dependencies from that checkout), which is what comparing checkouts takes.
 *
 * @example
 * ```sh
 * node --import tsx benchmarks/src/instant-fleet.ts /work/main 18700   # prints {"url", "pid"} when serving
 * ```
 */
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/** What every job of an instant sandbox answers. */
export const INSTANT_OUTCOME = {
  status: 'ok',
  stdout: '2\n',
  stderr: '',
  exit_code: 0,
  duration_ms: 0.05,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {}
} as const

/** A driver (the runner's `Driver` shape) whose sandboxes answer every job on the next turn of the event loop. */
export function instantDriver(): object {
  return {
    name: 'unsafe',
    languages: ['python', 'javascript'],
    async check() {},
    createSandbox(id: string) {
      let state = 'starting'
      return {
        id,
        get state() {
          return state
        },
        async start() {
          state = 'ready'
        },
        execute: async () =>
          await new Promise((resolve) => {
            setImmediate(() => {
              resolve({ ...INSTANT_OUTCOME, truncated: { ...INSTANT_OUTCOME.truncated }, files: {} })
            })
          }),
        stats: () => ({ jobs: 0 }),
        async close() {
          state = 'closed'
        }
      }
    },
    describe: () => ({
      driver: 'unsafe',
      boundary: 'none: instant sandboxes for measuring the node path',
      properties: []
    }),
    async close() {}
  }
}

/** Starts the checkout's gateway and runner on `port` with instant sandboxes; resolves with the URL. */
export async function startInstantFleet(
  checkout: string,
  port: number,
  poolSize = 3
): Promise<{ url: string; close: () => Promise<void> }> {
  const from = (path: string): string => pathToFileURL(resolve(checkout, path)).href
  const runnerPackage = await import(from('services/runner/src/index.ts'))
  const gatewayPackage = await import(from('services/gateway/src/index.ts'))
  const { config } = runnerPackage.readRunnerConfig({ argv: ['--pool-size', String(poolSize)], env: {} })
  const runner = new runnerPackage.Runner(config, { driver: instantDriver() })
  await runner.start()
  const gatewayConfig = gatewayPackage.loadGatewayConfig({
    values: { host: '127.0.0.1', port, logLevel: 'warn' },
    env: {}
  })
  const gateway = await gatewayPackage.startGateway({
    config: gatewayConfig,
    clients: [new gatewayPackage.InProcessRunnerClient(runner)],
    registries: [runner.registry],
    logger: false
  })
  return {
    url: gateway.url as string,
    close: async () => {
      await gateway.close()
      await runner.close()
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [checkout, port, poolSize] = process.argv.slice(2)
  if (checkout === undefined || port === undefined) {
    console.error('usage: node --import tsx benchmarks/src/instant-fleet.ts CHECKOUT PORT [POOL_SIZE]')
    process.exit(2)
  }
  const fleet = await startInstantFleet(checkout, Number(port), poolSize === undefined ? undefined : Number(poolSize))
  console.log(JSON.stringify({ url: fleet.url, pid: process.pid }))
  process.once('SIGTERM', () => {
    void fleet.close().then(() => process.exit(0))
  })
}
