/**
 * The runner's side of a session's agent (sandbox-images/python/sandfleet_sandbox/agent.py): NDJSON requests over
 * the agent's own socket, each with an id, answered once (files, `ps`, signals, stdin) or by a stream of events (a
 * process started or met again). Requests run at once, side by side; the agent answers each as it can.
 *
 * An agent that refuses answers `{kind, message}`: {@link AgentChannel.call} rejects with the runner's error of that
 * kind (`SF_ERR_SANDBOX_…`). A socket that ends rejects every request still open with `SF_ERR_SESSION_LOST`: the
 * session's processes died with it.
 */
import type { Socket } from 'node:net'
import { SESSION_LOST, type SandboxEvent, type SandboxProcessCall } from '@sandfleet/protocol'
import { SandboxError, SessionError, type SandboxErrorCode } from '../errors.ts'

/** The agent's kinds of refusal, as the runner's codes. */
const KINDS: Readonly<Record<string, SandboxErrorCode>> = Object.freeze({
  not_found: 'SF_ERR_SANDBOX_PATH_NOT_FOUND',
  exists: 'SF_ERR_SANDBOX_PATH_EXISTS',
  invalid: 'SF_ERR_SANDBOX_BAD_ARGUMENT',
  denied: 'SF_ERR_SANDBOX_PATH_DENIED',
  too_large: 'SF_ERR_SANDBOX_TOO_LARGE',
  io: 'SF_ERR_SANDBOX_IO'
})

/** The runner's error of an agent's refusal; a process not found is its own code. */
function refusal(error: { kind?: unknown; message?: unknown }, op: string): SandboxError {
  const message = typeof error.message === 'string' ? error.message : 'the agent refused'
  if (error.kind === 'not_found' && !['read', 'write', 'stat', 'list', 'mkdir', 'move', 'remove'].includes(op))
    return new SandboxError('SF_ERR_SANDBOX_PROCESS_NOT_FOUND', message)
  return new SandboxError(KINDS[String(error.kind)] ?? 'SF_ERR_SANDBOX_IO', message)
}

interface Waiting {
  op: string
  /** A one-shot answer. */
  answer?: (ok: unknown) => void
  /** A stream's event. */
  event?: (event: SandboxEvent) => void
  fail: (err: Error) => void
  /** A stream that has had its first event: its end, not an answer, ends it. */
  started?: boolean
}

/** One session's agent, over its socket. */
export class AgentChannel {
  readonly #socket: Socket
  readonly #waiting = new Map<number, Waiting>()
  #seq = 0
  #buffered = ''
  #closed = false

  constructor(socket: Socket) {
    this.#socket = socket
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => this.#onData(chunk))
    socket.on('close', () => this.#onEnd())
    socket.on('error', () => {})
  }

  /** Whether the agent's socket has ended. */
  get closed(): boolean {
    return this.#closed
  }

  /** One request answered once: resolves with its `ok`, rejects with the runner's error of its refusal. */
  async call<T>(request: { op: string } & Record<string, unknown>): Promise<T> {
    return await new Promise<T>((resolve, reject) => {
      this.#send(request, { op: request.op, answer: (ok) => resolve(ok as T), fail: reject })
    })
  }

  /**
   * A process started or met again: `onEvent` sees its events; resolves after `end`, or at once when `signal`
   * aborts (the agent stops sending; the process runs on). Rejects before the first event when refused.
   */
  async stream(
    request: SandboxProcessCall,
    onEvent: (event: SandboxEvent) => void,
    signal?: AbortSignal
  ): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let id = 0
      const detach = (): void => {
        if (!this.#waiting.delete(id)) return
        this.#write({ id: ++this.#seq, op: 'detach', stream: id })
        resolve()
      }
      id = this.#send(request, {
        op: request.op,
        event: (event) => {
          onEvent(event)
          if (event.event === 'end') {
            signal?.removeEventListener('abort', detach)
            resolve()
          }
        },
        fail: (err) => {
          signal?.removeEventListener('abort', detach)
          reject(err)
        }
      })
      if (signal?.aborted === true) detach()
      else signal?.addEventListener('abort', detach, { once: true })
    })
  }

  /** Ends the agent (its processes with it). Idempotent. */
  close(): void {
    this.#socket.destroy()
  }

  #send(request: object, waiting: Waiting): number {
    const id = ++this.#seq
    if (this.#closed) {
      waiting.fail(new SessionError(SESSION_LOST, "the session's agent is gone"))
      return id
    }
    this.#waiting.set(id, waiting)
    this.#write({ ...request, id })
    return id
  }

  #write(frame: object): void {
    this.#socket.write(JSON.stringify(frame) + '\n')
  }

  #onData(chunk: string): void {
    this.#buffered += chunk
    let nl = this.#buffered.indexOf('\n')
    while (nl !== -1) {
      const line = this.#buffered.slice(0, nl)
      this.#buffered = this.#buffered.slice(nl + 1)
      if (line !== '') this.#onFrame(line)
      nl = this.#buffered.indexOf('\n')
    }
  }

  #onFrame(line: string): void {
    let frame: { id?: unknown; ok?: unknown; error?: { kind?: unknown; message?: unknown }; event?: unknown }
    try {
      frame = JSON.parse(line) as typeof frame
    } catch {
      return
    }
    const waiting = typeof frame.id === 'number' ? this.#waiting.get(frame.id) : undefined
    if (waiting === undefined) return
    const id = frame.id as number
    if (frame.error !== undefined) {
      this.#waiting.delete(id)
      waiting.fail(refusal(frame.error, waiting.op))
    } else if (typeof frame.event === 'string' && waiting.event !== undefined) {
      waiting.started = true
      if (frame.event === 'end') this.#waiting.delete(id)
      const { id: _id, ...event } = frame
      waiting.event(event as unknown as SandboxEvent)
    } else if (waiting.answer !== undefined) {
      this.#waiting.delete(id)
      waiting.answer(frame.ok ?? {})
    }
  }

  #onEnd(): void {
    if (this.#closed) return
    this.#closed = true
    const lost = new SessionError(SESSION_LOST, "the session's agent is gone: its processes died")
    for (const waiting of this.#waiting.values()) waiting.fail(lost)
    this.#waiting.clear()
  }
}
