/**
 * The HTTP front the side-by-side baselines share (naive-server.ts, fork-prototype.ts): a plain
 * node:http server on 127.0.0.1 and a free port that takes `POST /v1/execute` {code, timeout_ms},
 * answers anything else 404 and a body without a string `code` 400, hands each call to `run`, and
 * prints `{"url": …}` once it listens. Not part of the product.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'

/** One call as a baseline runs it. */
export interface BaselineCall {
  code: string
  timeoutMs: number
}

/** Writes `text` (JSON) as the whole response. */
export function answer(res: ServerResponse, statusCode: number, text: string): void {
  res.writeHead(statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

const INVALID = '{"status":"invalid_request"}'

/** Serves `run` until SIGTERM or SIGINT, which call `onStop` before the process exits. */
export function serveBaseline(
  run: (call: BaselineCall, res: ServerResponse) => void,
  onStop: () => void = () => {}
): void {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || req.url !== '/v1/execute') {
      answer(res, 404, INVALID)
      return
    }
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      let request: { code?: unknown; timeout_ms?: unknown }
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        answer(res, 400, INVALID)
        return
      }
      if (typeof request.code !== 'string') {
        answer(res, 400, INVALID)
        return
      }
      run({ code: request.code, timeoutMs: typeof request.timeout_ms === 'number' ? request.timeout_ms : 10_000 }, res)
    })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? address.port : 0
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
  })
  const stop = (): void => {
    server.close()
    server.closeAllConnections()
    onStop()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
