/**
 * The fork-on-demand prototype issue 2 states its throughput targets beside: a plain node:http
 * server whose `POST /v1/execute` goes as an NDJSON line to one Python process
 * (benchmarks/fork-prototype.py) that forks a child per call, on demand. No sandbox, no warm
 * process ahead of the call, no output cap. Only for side-by-side figures; not part of the product.
 * Usage: node --import tsx benchmarks/src/fork-prototype.ts [--python python3] [--preload sympy];
 * prints `{"url": …}`.
 */
import { spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { python: { type: 'string', default: 'python3' }, preload: { type: 'string', default: '' } } })
const script = fileURLToPath(new URL('../fork-prototype.py', import.meta.url))
const forker = spawn(values.python ?? 'python3', [script, '--preload', values.preload ?? ''], { stdio: ['pipe', 'pipe', 'inherit'] })
forker.on('exit', (code, signal) => { console.error(`fork-prototype.py exited (${signal ?? code})`); process.exit(1) })

const waiting = new Map<number, ServerResponse>()
let nextId = 0

function answer (res: ServerResponse, statusCode: number, text: string): void {
  res.writeHead(statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

createInterface({ input: forker.stdout }).on('line', (line) => {
  const id = (JSON.parse(line) as { id: number }).id
  const res = waiting.get(id)
  waiting.delete(id)
  if (res !== undefined) answer(res, 200, line)
})

function handle (req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST' || req.url !== '/v1/execute') { answer(res, 404, '{"status":"invalid_request"}'); return }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    let request: { code?: unknown, timeout_ms?: unknown }
    try { request = JSON.parse(Buffer.concat(chunks).toString('utf8')) } catch { answer(res, 400, '{"status":"invalid_request"}'); return }
    if (typeof request.code !== 'string') { answer(res, 400, '{"status":"invalid_request"}'); return }
    const id = nextId++
    waiting.set(id, res)
    forker.stdin.write(JSON.stringify({ id, code: request.code, timeout_ms: typeof request.timeout_ms === 'number' ? request.timeout_ms : 10_000 }) + '\n')
  })
}

const server = createServer(handle)
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` }))
})
const stop = (): void => { server.close(); server.closeAllConnections(); forker.kill('SIGKILL'); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
