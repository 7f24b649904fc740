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
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { Duplex } from 'node:stream'
import type Docker from 'dockerode'
import { messageOf } from '@sandfleet/protocol/http'
import { ExecutorChannel } from '../../kits/executor/executor-channel.ts'
import { CHANNEL_SOCKET, type DockerDriverOptions, type DockerEngine } from './docker-engine.ts'

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

  readonly #frames: Duplex | undefined

  private constructor(
    container: Docker.Container,
    stream: Duplex,
    channel: ExecutorChannel,
    name: string,
    logger: DockerContainerLogger | undefined,
    frames: Duplex | undefined
  ) {
    this.container = container
    this.#stream = stream
    this.#frames = frames
    this.channel = channel
    this.name = name
    this.#logger = logger
  }

  /**
   * Creates and starts one container labelled `name`, and waits for its executor's `ready`.
   * On any failure the container is removed and the error says why it exited, when it did.
   */
  static async boot(
    engine: DockerEngine,
    opts: Readonly<DockerDriverOptions>,
    name: string,
    logger?: DockerContainerLogger
  ): Promise<DockerContainer> {
    const listener = opts.channel === 'socket' ? await ChannelListener.open() : undefined
    let container: Docker.Container
    try {
      container = await engine.docker.createContainer(engine.containerSpec(name, listener?.dir))
    } catch (err) {
      listener?.close()
      throw err
    }
    let booted: DockerContainer | undefined
    try {
      // attached before it starts, so no output is lost: the executor's diagnostics (stderr), its exit, and with
      // `channel: 'attach'` its frames
      const stream = (await container.attach({
        stream: true,
        stdin: listener === undefined,
        stdout: true,
        stderr: true,
        hijack: true
      })) as unknown as Duplex
      const stdout = new PassThrough()
      const stderr = new PassThrough()
      container.modem.demuxStream(stream, stdout, stderr)
      let self: DockerContainer | undefined
      const connection = listener?.accept(opts.readyTimeoutMs)
      connection?.catch(() => {}) // awaited below; a start that fails first is the error reported
      if (connection !== undefined) await container.start()
      const frames: Duplex | undefined = connection === undefined ? undefined : await connection
      const channel = new ExecutorChannel(frames ?? stdout, frames ?? stream, {
        onLog: (level: string, message: string) => logger?.info({ sandbox: self?.name ?? name, level }, message),
        events: opts.events
      })
      booted = self = new DockerContainer(container, stream, channel, name, logger, frames)
      const ended = (): void => {
        stdout.end()
        stderr.end()
        if (self !== undefined) self.#ended()
      }
      for (const s of frames === undefined ? [stream] : [stream, frames]) {
        s.on('end', ended)
        s.on('error', ended)
        s.on('close', ended)
      }
      stderr.setEncoding('utf8')
      stderr.on('data', (text: string) =>
        logger?.warn({ sandbox: self?.name ?? name, stderr: text.slice(0, 2000) }, 'executor stderr')
      )
      if (connection === undefined) await container.start()
      await channel.ready(opts.readyTimeoutMs)
      return booted
    } catch (err) {
      listener?.close()
      const why = await exitReason(container)
      if (booted !== undefined) await booted.remove()
      else await container.remove({ force: true }).catch(() => {})
      throw Object.assign(new Error(`${messageOf(err)}${why}`, { cause: err }), { exitReason: why })
    }
  }

  /** True once the container's stream ended (it died, or {@link remove} ran). */
  get exited(): boolean {
    return this.#exited || this.channel.closed
  }

  /** `listener` runs once when the stream ends without {@link remove}; at once if it already has. */
  onExit(listener: () => void): void {
    if (this.#exited && this.#removing === undefined) {
      listener()
      return
    }
    this.#exitListeners.push(listener)
  }

  /** Whether the engine says the container was OOM-killed. */
  async oomKilled(): Promise<boolean> {
    const info = await this.container.inspect().catch(() => undefined)
    return info?.State.OOMKilled === true
  }

  /**
   * The container's process count and limit now, from the engine (its pids cgroup, read at once: `one-shot`);
   * undefined when the engine does not answer within `timeoutMs` or says neither.
   */
  async pids(timeoutMs: number): Promise<{ current: number; limit: number } | undefined> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, timeoutMs, undefined)))
    try {
      const stats = await Promise.race([this.container.stats({ stream: false, 'one-shot': true }), late])
      const { current, limit } = stats?.pids_stats ?? {}
      return typeof current === 'number' && typeof limit === 'number' && limit > 0 ? { current, limit } : undefined
    } catch {
      return undefined
    } finally {
      clearTimeout(timer)
    }
  }

  /** ` (container exited 137, OOM-killed)`, or '' while it runs. */
  async exitReason(): Promise<string> {
    return await exitReason(this.container)
  }

  /** Shuts the executor down and force-removes the container. Idempotent. */
  async remove(): Promise<void> {
    this.#removing ??= (async () => {
      this.#exitListeners.length = 0
      try {
        this.channel.close()
      } catch {}
      this.#frames?.destroy()
      this.#stream.destroy()
      await this.container.remove({ force: true }).catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 404)
          this.#logger?.warn({ sandbox: this.name, err: messageOf(err) }, 'container removal failed')
      })
    })()
    await this.#removing
  }

  #ended(): void {
    if (this.#exited) return
    this.#exited = true
    if (this.#removing !== undefined) return
    for (const listener of this.#exitListeners.splice(0)) listener()
  }
}

/**
 * The runner's end of one container's channel socket (`channel: 'socket'`): a fresh directory of
 * its own holding a listening {@link CHANNEL_SOCKET}, bound read-only into the container. The
 * first connection (the executor's, before any job can run) is the channel; the listener is then
 * closed and the directory removed, so nothing that runs later in the container can connect.
 */
class ChannelListener {
  readonly #server: Server
  #closed = false
  #timer: NodeJS.Timeout | undefined

  private constructor(
    readonly dir: string,
    server: Server
  ) {
    this.#server = server
  }

  /** Listens in a new directory (traversable by the container's unprivileged user). */
  static async open(): Promise<ChannelListener> {
    const dir = mkdtempSync(join(tmpdir(), 'sf-channel-'))
    chmodSync(dir, 0o755)
    const server = createServer()
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(join(dir, CHANNEL_SOCKET), () => {
          server.off('error', reject)
          resolve()
        })
      })
      chmodSync(join(dir, CHANNEL_SOCKET), 0o666) // the executor runs as another user
    } catch (err) {
      server.close()
      rmSync(dir, { recursive: true, force: true })
      throw err
    }
    return new ChannelListener(dir, server)
  }

  /** The first connection, within `timeoutMs`; the listener is closed either way. */
  accept(timeoutMs: number): Promise<Socket> {
    return new Promise<Socket>((resolve, reject) => {
      this.#timer = setTimeout(() => {
        this.close()
        reject(new Error(`the executor did not connect to its channel within ${timeoutMs} ms`))
      }, timeoutMs)
      this.#server.once('connection', (socket: Socket) => {
        this.close()
        socket.setNoDelay?.(true)
        resolve(socket)
      })
    })
  }

  /** Stops listening and removes the directory. Idempotent. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#timer)
    this.#server.close()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

async function exitReason(container: Docker.Container): Promise<string> {
  const info = await container.inspect().catch(() => undefined)
  if (info === undefined || info.State.Running) return ''
  return ` (container exited ${info.State.ExitCode}${info.State.OOMKilled ? ', OOM-killed' : ''}${info.State.Error !== '' ? `: ${info.State.Error}` : ''})`
}
