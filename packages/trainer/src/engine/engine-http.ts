/**
 * The HTTP side of the engine adapters: one undici `Pool` per engine (keep-alive), JSON posts and
 * text gets, engine failures turned into {@link TrainerError}s with stable codes.
 */
import { Pool } from 'undici'
import { TRAINER_ERROR_CODES, TrainerError } from '../errors.ts'

/** Connection options of an engine adapter. */
export interface EngineHttpOptions {
  /** Base URL of the server, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is accepted and dropped). */
  url: string
  /** Keep-alive connections (default 64: one per generation in flight is the fast case). */
  connections?: number
  /** Sent as `authorization: Bearer <apiKey>`. */
  apiKey?: string
  /** Time for one request, ms (default 600 000: long generations are normal). */
  requestTimeoutMs?: number
}

/** A small JSON client of one engine server. */
export class EngineHttp {
  /** Base URL without a trailing slash or `/v1`. */
  readonly url: string
  private readonly pool: Pool
  private readonly headers: Record<string, string>
  private readonly timeoutMs: number
  private closed = false

  /** A client; it connects lazily. */
  constructor(options: EngineHttpOptions) {
    this.url = options.url.replace(/\/+$/, '').replace(/\/v1$/, '')
    this.pool = new Pool(this.url, { connections: options.connections ?? 64, pipelining: 1 })
    this.headers = {
      'content-type': 'application/json',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {})
    }
    this.timeoutMs = options.requestTimeoutMs ?? 600_000
  }

  /**
   * POSTs `body` as JSON to `path` and returns the parsed answer; non-2xx answers throw `SF_ERR_TRAINER_ENGINE_HTTP`.
   */
  async post(path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    const text = await this.send('POST', path, JSON.stringify(body), signal)
    try {
      return JSON.parse(text)
    } catch (err) {
      throw new TrainerError(TRAINER_ERROR_CODES.ENGINE_BAD_RESPONSE, `${path}: the engine's answer is not JSON`, 502, {
        cause: err
      })
    }
  }

  /** GETs `path` as text (the metrics endpoint). */
  async getText(path: string, signal?: AbortSignal): Promise<string> {
    return await this.send('GET', path, undefined, signal)
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    signal?: AbortSignal
  ): Promise<string> {
    const timeout = AbortSignal.timeout(this.timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let statusCode: number
    let text: string
    try {
      const res = await this.pool.request({
        method,
        path,
        headers: this.headers,
        ...(body !== undefined ? { body } : {}),
        signal: combined
      })
      statusCode = res.statusCode
      text = await res.body.text()
    } catch (err) {
      if (signal?.aborted) throw new TrainerError(TRAINER_ERROR_CODES.ABORTED, `${path}: aborted`, 499, { cause: err })
      throw new TrainerError(
        TRAINER_ERROR_CODES.ENGINE_CONNECTION,
        `${method} ${this.url}${path} failed: ${(err as Error).message}`,
        502,
        { cause: err }
      )
    }
    if (statusCode < 200 || statusCode >= 300) {
      throw new TrainerError(
        TRAINER_ERROR_CODES.ENGINE_HTTP,
        `${method} ${path} answered HTTP ${statusCode}: ${text.slice(0, 500)}`,
        statusCode
      )
    }
    return text
  }

  /** Closes the connections; safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.pool.close()
  }
}
