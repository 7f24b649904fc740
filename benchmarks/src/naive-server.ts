/**
 * The naive baseline: a plain node:http server that answers `POST /v1/execute` by spawning
 * `python3 -c CODE` for every call (what most code sandboxes do), with no sandbox around it and no
 * warm process. Only for side-by-side figures; not part of the product.
 * Usage: node --import tsx benchmarks/src/naive-server.ts [--python python3]; prints `{"url": …}`.
 */
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { python: { type: 'string', default: 'python3' } } })
const python = values.python ?? 'python3'

function answer (res: ServerResponse, statusCode: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

function handle (req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST' || req.url !== '/v1/execute') { answer(res, 404, { status: 'invalid_request' }); return }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    let request: { code?: unknown, timeout_ms?: unknown }
    try { request = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { answer(res, 400, { status: 'invalid_request' }); return }
    if (typeof request.code !== 'string') { answer(res, 400, { status: 'invalid_request' }); return }
    const timeoutMs = typeof request.timeout_ms === 'number' ? request.timeout_ms : 10_000
    const started = performance.now()
    const child = spawn(python, ['-c', request.code], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.setEncoding('utf8').on('data', (s: string) => { stdout += s })
    child.stderr.setEncoding('utf8').on('data', (s: string) => { stderr += s })
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, timeoutMs)
    child.on('error', (err) => { clearTimeout(timer); answer(res, 200, { status: 'infra_error', stdout, stderr: err.message, exit_code: null }) })
    child.on('close', (code) => {
      clearTimeout(timer)
      const status = timedOut ? 'timeout' : code === 0 ? 'ok' : 'error'
      answer(res, 200, { status, stdout, stderr, exit_code: code, duration_ms: performance.now() - started })
    })
  })
}

const server = createServer(handle)
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
})
const stop = (): void => { server.close(); server.closeAllConnections(); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
