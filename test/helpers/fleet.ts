/**
 * A real fleet for integration suites: runners with the process backend (bubblewrap, real
 * Python), each listening on 127.0.0.1, and a gateway over HTTP in front of them.
 */
import { startGateway, loadGatewayConfig, type RunningGateway } from '@sandfleet/gateway'
import { listenRunner, runnerConfig, silentLogger, type RunnerConfigInput, type RunnerServer } from '@sandfleet/runner'

/** Runners and a gateway; `close()` releases everything (call it in `finally`). */
export interface TestFleet {
  runners: RunnerServer[]
  gateway: RunningGateway
  /** The gateway's base URL. */
  url: string
  close(): Promise<void>
}

/** Starts `ids.length` runners (process backend unless overridden) and a gateway routing to them. */
export async function startFleet(
  ids: string[],
  runner: RunnerConfigInput = {},
  gateway: Record<string, unknown> = {}
): Promise<TestFleet> {
  const runners: RunnerServer[] = []
  try {
    for (const id of ids) {
      runners.push(
        await listenRunner(
          runnerConfig({ backend: 'process', poolSize: 2, host: '127.0.0.1', port: 0, id, ...runner }),
          { logger: silentLogger }
        )
      )
    }
    const config = loadGatewayConfig({
      values: { host: '127.0.0.1', port: 0, runners: runners.map((r) => r.url), loadPollMs: 50, ...gateway }
    })
    const gw = await startGateway({ config, logger: false })
    return {
      runners,
      gateway: gw,
      url: gw.url,
      close: async () => {
        await gw.close()
        await Promise.all(
          runners.map(async (r) => {
            await r.close()
          })
        )
      }
    }
  } catch (err) {
    await Promise.all(
      runners.map(async (r) => {
        await r.close()
      })
    )
    throw err
  }
}

/** POSTs JSON and answers the status code and parsed body. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {}
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text) }
}

/** GETs (or DELETEs) and answers the status code and parsed body. */
export async function call(method: 'GET' | 'DELETE', url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : JSON.parse(text) }
}
