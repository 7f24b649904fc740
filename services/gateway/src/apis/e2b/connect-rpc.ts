/**
 * The Connect protocol (connectrpc.com) with its JSON codec, as envd speaks it to E2B's SDK: a unary call is a
 * `POST /package.Service/Method` of `application/json` answered with the response message as JSON, or with an
 * error `{code, message}` and the HTTP status of its code; a server stream is a `POST` of `application/connect+json`
 * whose request, and each message of whose answer, is an envelope (a flags byte, a 4-byte big-endian length, the
 * JSON), the last envelope flagged end-of-stream (0x02) with `{}` or `{"error": {code, message}}`.
 */
import type { ServerResponse } from 'node:http'

/** A Connect error code. */
export type ConnectCode =
  | 'canceled'
  | 'unknown'
  | 'invalid_argument'
  | 'deadline_exceeded'
  | 'not_found'
  | 'already_exists'
  | 'permission_denied'
  | 'resource_exhausted'
  | 'failed_precondition'
  | 'unimplemented'
  | 'internal'
  | 'unavailable'
  | 'unauthenticated'

/** The HTTP status of each code, for a unary answer (Connect's table). */
const HTTP_STATUS: Readonly<Record<ConnectCode, number>> = Object.freeze({
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  unauthenticated: 401
})

/** A Connect error: its code and message. */
export class ConnectError extends Error {
  readonly code: ConnectCode

  constructor(code: ConnectCode, message: string) {
    super(message)
    this.code = code
    this.name = 'ConnectError'
  }

  /** The HTTP status of a unary answer of this error. */
  get httpStatus(): number {
    return HTTP_STATUS[this.code]
  }

  /** The error as JSON. */
  toJSON(): { code: ConnectCode; message: string } {
    return { code: this.code, message: this.message }
  }
}

/** The media types of the JSON codec: unary and streamed. */
export const CONNECT_JSON = 'application/json'
export const CONNECT_STREAM_JSON = 'application/connect+json'

const END_STREAM = 0x02
const COMPRESSED = 0x01

/** The message of a streamed request's body: its one envelope, read. */
export function unenvelope(body: Buffer): unknown {
  if (body.length < 5) throw new ConnectError('invalid_argument', 'the request is not an enveloped message')
  const flags = body[0] ?? 0
  if ((flags & COMPRESSED) !== 0)
    throw new ConnectError('unimplemented', 'compressed messages are not supported (send them uncompressed)')
  const length = body.readUInt32BE(1)
  if (body.length < 5 + length) throw new ConnectError('invalid_argument', 'the enveloped message is cut short')
  try {
    return JSON.parse(body.subarray(5, 5 + length).toString('utf8'))
  } catch {
    throw new ConnectError('invalid_argument', 'the message is not JSON')
  }
}

/** One envelope of a streamed answer. */
export function envelope(message: unknown, end = false): Buffer {
  const json = Buffer.from(JSON.stringify(message))
  const head = Buffer.alloc(5)
  head[0] = end ? END_STREAM : 0
  head.writeUInt32BE(json.length, 1)
  return Buffer.concat([head, json])
}

/**
 * A streamed answer on `res`: its head at once (200, the stream's media type), then each message as it comes, then
 * its end (with an error, when it ended in one); a keep-alive message while it is idle, every `keepAliveMs`.
 */
export class ConnectStream {
  readonly #res: ServerResponse
  readonly #keepAlive: NodeJS.Timeout | undefined
  #ended = false
  #last = performance.now()

  constructor(res: ServerResponse, keepAliveMs: number, keepAlive: unknown) {
    this.#res = res
    res.writeHead(200, { 'content-type': CONNECT_STREAM_JSON })
    this.#keepAlive =
      keepAliveMs > 0
        ? setInterval(() => {
            if (performance.now() - this.#last >= keepAliveMs) this.send(keepAlive)
          }, keepAliveMs).unref()
        : undefined
  }

  /** Sends one message. */
  send(message: unknown): void {
    if (this.#ended) return
    this.#last = performance.now()
    this.#res.write(envelope(message))
  }

  /** Ends the stream, with `error` when it ended in one. Idempotent. */
  end(error?: ConnectError): void {
    if (this.#ended) return
    this.#ended = true
    clearInterval(this.#keepAlive)
    this.#res.end(envelope(error === undefined ? {} : { error: error.toJSON() }, true))
  }
}
