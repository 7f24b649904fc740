/**
 * One booted sandbox container: created, attached (before it starts, so no output is lost),
 * started, its executor `ready` on the attached stream. A {@link DockerSandbox} runs its jobs on
 * one; the driver may boot one ahead of need (a warm spare) and hand it to the next sandbox that
 * starts, so a replacement does not wait for a container to boot.
 *
 * @example
 * ```ts
 * const booted = await DockerContainer.boot(engine, options, 'docker-python-3', logger)
 * booted.onExit(() => console.log('the container died'))
 * const outcome = await booted.channel.run(job)
 * await booted.remove()
 * ```
 */
import { PassThrough } from 'node:stream'
import type { Duplex } from 'node:stream'
import type Docker from 'dockerode'
import { ExecutorChannel } from './executor-channel.ts'
import type { DockerDriverOptions, DockerEngine } from './docker-engine.ts'

/** Logger the container writes its diagnostics to. */
export interface DockerContainerLogger {
  info: (fields: Record<string, unknown>, msg?: string) => void
  warn: (fields: Record<string, unknown>, msg?: string) => void
}

/** A started container and the executor channel over its attached stream. */
export class DockerContainer {
  /** The dockerode handle. */
  readonly container: Docker.Container
  /** The executor's frame channel (stdout demultiplexed in, stdin out). */
  readonly channel: ExecutorChannel
  /** Who the container serves now, for log lines (the sandbox's id, or `spare-N`). */
  name: string
  readonly #stream: Duplex
  #exited = false
  #removing: Promise<void> | undefined
  readonly #exitListeners: Array<() => void> = []
  readonly #logger?: DockerContainerLogger

  private constructor (container: Docker.Container, stream: Duplex, channel: ExecutorChannel, name: string, logger: DockerContainerLogger | undefined) {
    this.container = container
    this.#stream = stream
    this.channel = channel
    this.name = name
    this.#logger = logger
  }

  /**
   * Creates and starts one container labelled `name`, and waits for its executor's `ready`.
   * On any failure the container is removed and the error says why it exited, when it did.
   */
  static async boot (engine: DockerEngine, opts: Readonly<DockerDriverOptions>, name: string, logger?: DockerContainerLogger): Promise<DockerContainer> {
    const container = await engine.docker.createContainer(engine.containerSpec(name))
    let booted: DockerContainer | undefined
    try {
      const stream = await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true }) as unknown as Duplex
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      container.modem.demuxStream(stream, stdout, stderr)
      let self: DockerContainer | undefined
      const channel = new ExecutorChannel(stdout, stream, {
        graceMs: opts.graceMs,
        onLog: (level: string, message: string) => logger?.info({ sandbox: self?.name ?? name, level }, message),
        // Hung executor: kill the whole container (the channel then answers the job).
        onHung: () => { void container.kill().catch(() => {}) }
      })
      booted = self = new DockerContainer(container, stream, channel, name, logger)
      const ended = (): void => { stdout.end(); stderr.end(); if (self !== undefined) self.#ended() }
      stream.on('end', ended)
      stream.on('error', ended)
      stream.on('close', ended)
      stderr.setEncoding('utf8')
      stderr.on('data', (text: string) => logger?.warn({ sandbox: self?.name ?? name, stderr: text.slice(0, 2000) }, 'executor stderr'))
      await container.start()
      await channel.ready(opts.readyTimeoutMs)
      return booted
    } catch (err) {
      const why = await exitReason(container)
      if (booted !== undefined) await booted.remove()
      else await container.remove({ force: true }).catch(() => {})
      throw Object.assign(new Error(`${messageOf(err)}${why}`, { cause: err }), { exitReason: why })
    }
  }

  /** True once the container's stream ended (it died, or {@link remove} ran). */
  get exited (): boolean {
    return this.#exited || this.channel.closed
  }

  /** `listener` runs once when the stream ends without {@link remove}; at once if it already has. */
  onExit (listener: () => void): void {
    if (this.#exited && this.#removing === undefined) { listener(); return }
    this.#exitListeners.push(listener)
  }

  /** Whether the engine says the container was OOM-killed. */
  async oomKilled (): Promise<boolean> {
    const info = await this.container.inspect().catch(() => undefined)
    return info?.State.OOMKilled === true
  }

  /** ` (container exited 137, OOM-killed)`, or '' while it runs. */
  async exitReason (): Promise<string> {
    return await exitReason(this.container)
  }

  /** Shuts the executor down and force-removes the container. Idempotent. */
  async remove (): Promise<void> {
    this.#removing ??= (async () => {
      this.#exitListeners.length = 0
      try { this.channel.close() } catch {}
      this.#stream.destroy()
      await this.container.remove({ force: true }).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 404) this.#logger?.warn({ sandbox: this.name, err: messageOf(err) }, 'container removal failed')
      })
    })()
    await this.#removing
  }

  #ended (): void {
    if (this.#exited) return
    this.#exited = true
    if (this.#removing !== undefined) return
    for (const listener of this.#exitListeners.splice(0)) listener()
  }
}

async function exitReason (container: Docker.Container): Promise<string> {
  const info = await container.inspect().catch(() => undefined)
  if (info === undefined || info.State.Running) return ''
  return ` (container exited ${info.State.ExitCode}${info.State.OOMKilled ? ', OOM-killed' : ''}${info.State.Error !== '' ? `: ${info.State.Error}` : ''})`
}

function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
