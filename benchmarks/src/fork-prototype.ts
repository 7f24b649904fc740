/**
 * The fork-on-demand prototype issue 2 states its throughput targets beside: a plain node:http
 * server whose `POST /v1/execute` goes as an NDJSON line to one Python process
 * (benchmarks/fork-prototype.py) that forks a child per call, on demand. No sandbox, no warm
 * process ahead of the call, no output cap. Only for side-by-side figures; not part of the product.
 * Usage: node --import tsx benchmarks/src/fork-prototype.ts [--python python3] [--preload sympy];
 * prints `{"url": …}`.
 */
import { spawn } from 'node:child_process'
import type { ServerResponse } from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { answer, serveBaseline } from './baseline-server.ts'

const { values } = parseArgs({
  options: { python: { type: 'string', default: 'python3' }, preload: { type: 'string', default: '' } }
})
const script = fileURLToPath(new URL('../fork-prototype.py', import.meta.url))
const forker = spawn(values.python ?? 'python3', [script, '--preload', values.preload ?? ''], {
  stdio: ['pipe', 'pipe', 'inherit']
})
forker.on('exit', (code, signal) => {
  console.error(`fork-prototype.py exited (${signal ?? code})`)
  process.exit(1)
})

const waiting = new Map<number, ServerResponse>()
let nextId = 0

createInterface({ input: forker.stdout }).on('line', (line) => {
  const id = (JSON.parse(line) as { id: number }).id
  const res = waiting.get(id)
  waiting.delete(id)
  if (res !== undefined) answer(res, 200, line)
})

serveBaseline(
  ({ code, timeoutMs }, res) => {
    const id = nextId++
    waiting.set(id, res)
    forker.stdin.write(JSON.stringify({ id, code, timeout_ms: timeoutMs }) + '\n')
  },
  () => {
    forker.kill('SIGKILL')
  }
)
