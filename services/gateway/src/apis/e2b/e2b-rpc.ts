/**
 * envd's Connect services on the sandbox URL (port 49983), JSON codec (connect-rpc.ts), with protobuf's JSON names:
 * `filesystem.Filesystem` Stat, ListDir, MakeDir, Move, Remove, and `process.Process` List, SendInput, SendSignal,
 * CloseStdin (unary), Start and Connect (server streams of process events, a keep-alive while idle at the interval
 * the client's `Keepalive-Ping-Interval` asks). Watching a directory, a PTY, streamed input and resizing are
 * `unimplemented`. A process runs in the sandbox's namespaces (the session's agent); a signal goes to its group.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { SandboxCall, SandboxEntry, SandboxEvent, SandboxProcessCall } from '@sandfleet/protocol'
import { RunnerRefusal } from '../../errors.ts'
import type { FleetSandboxes } from '../../sessions/fleet-sandboxes.ts'
import { ConnectError, ConnectStream, unenvelope, type ConnectCode } from './connect-rpc.ts'
import { answerRefusal, envOf, sandboxRef, type SandboxRef, type SandboxServer } from './e2b-sandbox-url.ts'
import { ENVD_PORT, isGone } from './e2b-shapes.ts'

/** The Connect code of each sandbox refusal. */
const CODES: Readonly<Record<string, ConnectCode>> = Object.freeze({
  SF_ERR_SANDBOX_PATH_NOT_FOUND: 'not_found',
  SF_ERR_SANDBOX_PROCESS_NOT_FOUND: 'not_found',
  SF_ERR_SANDBOX_PATH_EXISTS: 'already_exists',
  SF_ERR_SANDBOX_PATH_DENIED: 'permission_denied',
  SF_ERR_SANDBOX_BAD_ARGUMENT: 'invalid_argument',
  SF_ERR_SANDBOX_TOO_LARGE: 'resource_exhausted',
  SF_ERR_SANDBOX_IO: 'internal',
  SF_ERR_SANDBOX_TOKEN: 'unauthenticated',
  SF_ERR_SESSION_NOT_FOUND: 'unavailable',
  SF_ERR_SESSION_LOST: 'unavailable'
})

const FILE_TYPES: Readonly<Record<SandboxEntry['type'], string>> = Object.freeze({
  file: 'FILE_TYPE_FILE',
  dir: 'FILE_TYPE_DIRECTORY',
  symlink: 'FILE_TYPE_SYMLINK',
  other: 'FILE_TYPE_UNSPECIFIED'
})

const SIGNALS: Readonly<Record<string, 9 | 15>> = Object.freeze({ SIGNAL_SIGKILL: 9, SIGNAL_SIGTERM: 15, 9: 9, 15: 15 })

/** The Connect error of anything a call threw. */
function connectError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err
  if (err instanceof RunnerRefusal) return new ConnectError(CODES[err.code] ?? 'internal', err.message)
  return new ConnectError('internal', err instanceof Error ? err.message : String(err))
}

/** An entry as protobuf's JSON gives `filesystem.EntryInfo`. */
function entryInfo(entry: SandboxEntry): Record<string, unknown> {
  return {
    name: entry.name,
    type: FILE_TYPES[entry.type],
    path: entry.path,
    size: String(entry.size),
    mode: entry.mode,
    permissions: entry.permissions,
    owner: entry.owner,
    group: entry.group,
    modifiedTime: new Date(entry.mtime * 1000).toISOString(),
    ...(entry.symlink_target === undefined ? {} : { symlinkTarget: entry.symlink_target })
  }
}

/** A process event as protobuf's JSON gives `process.StartResponse` (and `ConnectResponse`). */
function processEvent(event: SandboxEvent): Record<string, unknown> {
  switch (event.event) {
    case 'start':
      return { event: { start: { pid: event.pid } } }
    case 'stdout':
      return { event: { data: { stdout: event.data } } }
    case 'stderr':
      return { event: { data: { stderr: event.data } } }
    case 'end':
      return { event: { end: { exitCode: event.exit_code, exited: event.exited, status: event.status } } }
  }
}

const str = (v: unknown, field: string): string => {
  if (typeof v !== 'string') throw new ConnectError('invalid_argument', `${field}: a string is required`)
  return v
}

type Message = Record<string, unknown>

/** The unary methods: each a request message to the sandbox's call, and its answer to the response message. */
type Unary = (ref: SandboxRef, message: Message, sandboxes: FleetSandboxes) => Promise<Message>

/** The pid a `process.ProcessSelector` names (by pid, or by tag among the running processes). */
async function pidOf(ref: SandboxRef, message: Message, sandboxes: FleetSandboxes): Promise<number> {
  const selector = (message.process ?? {}) as { pid?: unknown; tag?: unknown }
  if (typeof selector.pid === 'number' && Number.isInteger(selector.pid)) return selector.pid
  if (typeof selector.tag === 'string') {
    const { processes } = await sandboxes.call(ref.id, ref.auth, { op: 'ps' })
    const found = processes.find((p) => p.tag === selector.tag)
    if (found === undefined) throw new ConnectError('not_found', `no running process tagged ${selector.tag}`)
    return found.pid
  }
  throw new ConnectError('invalid_argument', 'process: a pid or a tag is required')
}

const call = async (ref: SandboxRef, sandboxes: FleetSandboxes, request: SandboxCall): Promise<unknown> =>
  await sandboxes.call(ref.id, ref.auth, request)

const UNARY: Readonly<Record<string, Unary>> = Object.freeze({
  'filesystem.Filesystem/Stat': async (ref, m, s) => {
    const { entry } = (await call(ref, s, { op: 'stat', path: str(m.path, 'path') })) as { entry: SandboxEntry }
    return { entry: entryInfo(entry) }
  },
  'filesystem.Filesystem/ListDir': async (ref, m, s) => {
    const depth = typeof m.depth === 'number' && m.depth >= 1 ? Math.floor(m.depth) : 1
    const { entries } = (await call(ref, s, { op: 'list', path: str(m.path, 'path'), depth })) as {
      entries: SandboxEntry[]
    }
    return { entries: entries.map(entryInfo) }
  },
  'filesystem.Filesystem/MakeDir': async (ref, m, s) => {
    const { entry } = (await call(ref, s, { op: 'mkdir', path: str(m.path, 'path') })) as { entry: SandboxEntry }
    return { entry: entryInfo(entry) }
  },
  'filesystem.Filesystem/Move': async (ref, m, s) => {
    const request = {
      op: 'move' as const,
      source: str(m.source, 'source'),
      destination: str(m.destination, 'destination')
    }
    const { entry } = (await call(ref, s, request)) as { entry: SandboxEntry }
    return { entry: entryInfo(entry) }
  },
  'filesystem.Filesystem/Remove': async (ref, m, s) => {
    await call(ref, s, { op: 'remove', path: str(m.path, 'path') })
    return {}
  },
  'process.Process/List': async (ref, _m, s) => {
    const { processes } = await s.call(ref.id, ref.auth, { op: 'ps' })
    return {
      processes: processes.map((p) => ({
        config: { cmd: p.cmd, args: p.args, envs: p.envs, cwd: p.cwd },
        pid: p.pid,
        ...(p.tag === undefined ? {} : { tag: p.tag })
      }))
    }
  },
  'process.Process/SendSignal': async (ref, m, s) => {
    const signal = SIGNALS[String(m.signal)]
    if (signal === undefined) throw new ConnectError('invalid_argument', 'signal: SIGNAL_SIGKILL or SIGNAL_SIGTERM')
    await call(ref, s, { op: 'signal', pid: await pidOf(ref, m, s), signal })
    return {}
  },
  'process.Process/SendInput': async (ref, m, s) => {
    const input = (m.input ?? {}) as { stdin?: unknown; pty?: unknown }
    if (input.pty !== undefined) throw new ConnectError('unimplemented', 'a PTY is not supported')
    await call(ref, s, { op: 'stdin', pid: await pidOf(ref, m, s), data: str(input.stdin ?? '', 'input.stdin') })
    return {}
  },
  'process.Process/CloseStdin': async (ref, m, s) => {
    await call(ref, s, { op: 'close_stdin', pid: await pidOf(ref, m, s) })
    return {}
  }
})

/** The methods E2B's envd has and sandfleet does not. */
const UNIMPLEMENTED: Readonly<Record<string, string>> = Object.freeze({
  'filesystem.Filesystem/WatchDir': 'watching a directory is not supported',
  'filesystem.Filesystem/CreateWatcher': 'watching a directory is not supported',
  'filesystem.Filesystem/GetWatcherEvents': 'watching a directory is not supported',
  'filesystem.Filesystem/RemoveWatcher': 'watching a directory is not supported',
  'process.Process/Update': 'a PTY is not supported',
  'process.Process/StreamInput': 'streamed input is not supported: use SendInput'
})

/** The sandbox's stream call of a `Start` or `Connect` request message. */
async function streamCallOf(
  method: string,
  ref: SandboxRef,
  m: Message,
  sandboxes: FleetSandboxes,
  maxCodeBytes: number
): Promise<SandboxProcessCall> {
  if (method === 'process.Process/Connect') return { op: 'connect', pid: await pidOf(ref, m, sandboxes) }
  if (m.pty !== undefined && m.pty !== null) throw new ConnectError('unimplemented', 'a PTY is not supported')
  const p = (m.process ?? {}) as { cmd?: unknown; args?: unknown; envs?: unknown; cwd?: unknown }
  const args = p.args ?? []
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string'))
    throw new ConnectError('invalid_argument', 'process.args: strings')
  const cmd = str(p.cmd, 'process.cmd')
  if (Buffer.byteLength([cmd, ...(args as string[])].join(' ')) > maxCodeBytes)
    throw new ConnectError(
      'invalid_argument',
      `process: the command is longer than ${maxCodeBytes} bytes (--max-code-bytes)`
    )
  let envs: Record<string, string> | undefined
  try {
    envs = envOf(p.envs, 'process.envs')
  } catch (err) {
    throw new ConnectError('invalid_argument', (err as Error).message)
  }
  return {
    op: 'start',
    cmd,
    args: args as string[],
    ...(envs === undefined ? {} : { envs }),
    ...(typeof p.cwd === 'string' && p.cwd !== '' ? { cwd: p.cwd } : {}),
    ...(m.stdin === true ? { stdin: true } : {}),
    ...(typeof m.tag === 'string' ? { tag: m.tag } : {})
  }
}

/** Registers envd's Connect routes on the sandbox URL. */
export function rpcRoutes(app: FastifyInstance, sandboxes: FleetSandboxes, maxCodeBytes: number): void {
  const route = {
    constraints: { e2bSandboxPort: ENVD_PORT },
    config: { ownAuth: true, e2bSandbox: { server: 'rpc' as SandboxServer }, calls: { of: () => [] } },
    schema: { hide: true }
  }

  const unary = async (
    method: string,
    request: FastifyRequest,
    reply: FastifyReply
  ): Promise<FastifyReply | Message> => {
    const ref = sandboxRef(request)
    try {
      const refused = UNIMPLEMENTED[method]
      if (refused !== undefined) throw new ConnectError('unimplemented', refused)
      const handler = UNARY[method]
      if (handler === undefined) throw new ConnectError('unimplemented', `${method} is not a method of envd`)
      const body = request.body
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new ConnectError('invalid_argument', 'the request message is not a JSON object')
      return await handler(ref, body as Message, sandboxes)
    } catch (err) {
      if (isGone(err)) return answerRefusal(request, reply, err)
      const e = connectError(err)
      return await reply.code(e.httpStatus).send(e.toJSON())
    }
  }

  const stream = async (method: string, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const ref = sandboxRef(request)
    const interval = Number(request.headers['keepalive-ping-interval'])
    const keepAliveMs = Number.isFinite(interval) && interval > 0 ? Math.min(interval, 50) * 1000 : 50_000
    reply.hijack()
    const out = new ConnectStream(reply.raw, keepAliveMs, { event: { keepalive: {} } })
    const controller = new AbortController()
    reply.raw.once('close', () => controller.abort())
    try {
      const refused = UNIMPLEMENTED[method]
      if (refused !== undefined) throw new ConnectError('unimplemented', refused)
      const body = request.body instanceof Buffer ? unenvelope(request.body) : request.body
      if (typeof body !== 'object' || body === null) throw new ConnectError('invalid_argument', 'no request message')
      const streamCall = await streamCallOf(method, ref, body as Message, sandboxes, maxCodeBytes)
      await sandboxes.stream(ref.id, ref.auth, streamCall, (event) => out.send(processEvent(event)), controller.signal)
      out.end()
    } catch (err) {
      out.end(connectError(err))
    }
    return reply
  }

  for (const method of [...Object.keys(UNARY), ...Object.keys(UNIMPLEMENTED)].filter((m) => !m.endsWith('/WatchDir')))
    app.post(`/${method}`, route, async (request, reply) => await unary(method, request, reply))
  for (const method of ['process.Process/Start', 'process.Process/Connect', 'filesystem.Filesystem/WatchDir'])
    app.post(`/${method}`, route, async (request, reply) => await stream(method, request, reply))
}
