/**
 * The naive baseline: a plain node:http server that answers `POST /v1/execute` by spawning
 * `python3 -c CODE` for every call (what most code sandboxes do), with no sandbox around it and no
 * warm process. Only for side-by-side figures; not part of the product.
 * Usage: node --import tsx benchmarks/src/naive-server.ts [--python python3]; prints `{"url": …}`.
 */
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'
import { answer, serveBaseline } from './baseline-server.ts'

const { values } = parseArgs({ options: { python: { type: 'string', default: 'python3' } } })
const python = values.python ?? 'python3'

serveBaseline(({ code, timeoutMs }, res) => {
  const started = performance.now()
  const child = spawn(python, ['-c', code], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  let timedOut = false
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    stdout += s
  })
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    stderr += s
  })
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, timeoutMs)
  child.on('error', (err) => {
    clearTimeout(timer)
    answer(res, 200, JSON.stringify({ status: 'infra_error', stdout, stderr: err.message, exit_code: null }))
  })
  child.on('close', (code) => {
    clearTimeout(timer)
    const status = timedOut ? 'timeout' : code === 0 ? 'ok' : 'error'
    answer(
      res,
      200,
      JSON.stringify({ status, stdout, stderr, exit_code: code, duration_ms: performance.now() - started })
    )
  })
})
