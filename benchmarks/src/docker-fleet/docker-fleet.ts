/**
 * A fleet of containers on a Docker network of its own, through deploy/fleet.sh (the script a
 * user runs): runners behind one DNS alias, gateways with --runners-dns, the shared secret.
 * For the multi-host benchmark (benchmarks/src/fleet-hosts.ts) and suite (test/fleet-hosts.test.ts, through
 * `@sandfleet/benchmarks/docker-fleet`); every container, the network and the image carry
 * the `name` given (release them with {@link DockerFleet.down} in `finally`).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const SCRIPT = `${ROOT}deploy/fleet.sh`

/** Options of {@link DockerFleet}. */
export interface DockerFleetOptions {
  /** Prefix of the containers and the network. */
  name: string
  image: string
  secret: string
  runnerArgs: string
  gatewayArgs: string
  /** `docker run` options of each runner (limits). */
  runnerDockerArgs: string
  /** The first gateway's port on 127.0.0.1, each further one the next (absent: ports the engine picks). */
  gatewayPort?: number
}

/** A runner container and what the host reaches it at. */
export interface RunnerContainer {
  container: string
  /** `http://IP:8081` on the fleet's network (reachable from this host on Linux). */
  url: string
}

export class DockerFleet {
  readonly options: DockerFleetOptions

  constructor(options: DockerFleetOptions) {
    this.options = options
  }

  #env(): NodeJS.ProcessEnv {
    const o = this.options
    return {
      ...process.env,
      SANDFLEET_FLEET_NAME: o.name,
      SANDFLEET_FLEET_IMAGE: o.image,
      SANDFLEET_RUNNER_SECRET: o.secret,
      SANDFLEET_RUNNER_ARGS: o.runnerArgs,
      SANDFLEET_GATEWAY_ARGS: o.gatewayArgs,
      SANDFLEET_RUNNER_DOCKER_ARGS: o.runnerDockerArgs,
      ...(o.gatewayPort === undefined ? {} : { SANDFLEET_GATEWAY_PORT: String(o.gatewayPort) })
    }
  }

  async #script(...args: string[]): Promise<string[]> {
    const { stdout } = await run('bash', [SCRIPT, ...args], { env: this.#env(), maxBuffer: 1 << 20 })
    return stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('build-fleet-image:'))
  }

  /** Builds the image when needed, starts `runners` runners and `gateways` gateways; answers the gateways' URLs. */
  async up(runners: number, gateways: number): Promise<string[]> {
    const lines = await this.#script('up', String(runners), String(gateways))
    return lines.filter((l) => l.startsWith('http://'))
  }

  /** Starts one more runner behind the alias. */
  async addRunner(): Promise<RunnerContainer> {
    const [container] = await this.#script('add-runner')
    return { container, url: await this.urlOf(container) }
  }

  /** The runner containers running now, in name order. */
  async runners(): Promise<RunnerContainer[]> {
    const { stdout } = await run('docker', [
      'ps',
      '--filter',
      `label=org.sandfleet.fleet=${this.options.name}`,
      '--filter',
      `name=^${this.options.name}-runner-`,
      '--format',
      '{{.Names}}'
    ])
    const names = stdout
      .split('\n')
      .filter((n) => n !== '')
      .sort()
    return await Promise.all(names.map(async (container) => ({ container, url: await this.urlOf(container) })))
  }

  async urlOf(container: string): Promise<string> {
    const { stdout } = await run('docker', [
      'inspect',
      '-f',
      '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}',
      container
    ])
    return `http://${stdout.trim()}:8081`
  }

  /** Sends `signal` to the container's init, which passes it on to the runner. */
  async kill(container: string, signal: 'KILL' | 'TERM'): Promise<void> {
    await run('docker', ['kill', '-s', signal, container])
  }

  /** `docker stop` (SIGTERM, then SIGKILL after `timeoutS`); answers the exit code and the runner's last log lines. */
  async stop(container: string, timeoutS = 40): Promise<{ exitCode: number; logs: string }> {
    await run('docker', ['stop', '-t', String(timeoutS), container])
    const { stdout } = await run('docker', ['inspect', '-f', '{{.State.ExitCode}}', container])
    const logs = await run('docker', ['logs', '--tail', '20', container])
    return { exitCode: Number(stdout.trim()), logs: logs.stdout + logs.stderr }
  }

  /** Removes a stopped (or killed) container. */
  async remove(container: string): Promise<void> {
    await run('docker', ['rm', '-f', container])
  }

  /** Removes every container and the network of this fleet. */
  async down(): Promise<void> {
    await this.#script('down').catch(() => {})
  }
}

/**
 * GETs `url` with a deadline. The deadline is a timer that holds the event loop: a connection
 * that docker's port proxy accepted before the server listened can hang with nothing else
 * holding it, and the suite would end with a promise still pending.
 */
export async function get(url: string, timeoutMs = 2000): Promise<Response> {
  const aborter = new AbortController()
  const timer = setTimeout(() => {
    aborter.abort()
  }, timeoutMs)
  try {
    return await fetch(url, { signal: aborter.signal })
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until `probe` resolves true, polling every `everyMs`; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 100
): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    if (await probe().catch(() => false)) return
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** The runner ids a gateway's /readyz lists as up and ready. */
export async function readyRunners(gateway: string): Promise<string[]> {
  const res = await get(`${gateway}/readyz`)
  const body = (await res.json()) as { runners: Array<{ runner: string; up: boolean; state: string }> }
  return body.runners.filter((r) => r.up && r.state === 'ready').map((r) => r.runner)
}
