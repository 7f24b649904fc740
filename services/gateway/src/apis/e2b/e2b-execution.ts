/**
 * The answer of the code interpreter's `POST /execute`: E2B's stream of lines (`number_of_executions`, `stdout`,
 * `stderr`, each `result` with its formats, `error` with name, value and traceback, `end_of_execution`), written as
 * the run's events come from its runner (`SandboxRunEvent`).
 *
 * The run's output is written as the code prints it: its lines wait at most {@link FLUSH_MS} (or until
 * {@link FLUSH_BYTES} of them wait), so a print loop makes few writes. A run that ends before anything was written is
 * one answer, through Fastify (its hooks, its metrics); otherwise the answer's head goes with the first lines, or after
 * {@link HEAD_AFTER_MS} when the run has printed nothing yet, and a keep-alive line every {@link KEEPALIVE_MS} (so no
 * client or proxy between takes it for idle). The results, the error and the end come when the run ends.
 */
import type { FastifyReply } from 'fastify'
import type { SandboxRun, SandboxRunEvent } from '@sandfleet/protocol'

const HEAD_AFTER_MS = 500
const KEEPALIVE_MS = 30_000
const FLUSH_MS = 20
const FLUSH_BYTES = 65_536

/** A display's MIME types as the fields of E2B's result. */
const FORMATS: Readonly<Record<string, string>> = Object.freeze({
  'text/plain': 'text',
  'text/html': 'html',
  'text/markdown': 'markdown',
  'image/svg+xml': 'svg',
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'application/pdf': 'pdf',
  'text/latex': 'latex',
  'application/json': 'json',
  'application/javascript': 'javascript'
})

/** A fleet status that is not the code's: the interpreter's 503 (retriable), while nothing was written. */
const FLEET = new Set(['overloaded', 'queue_timeout', 'infra_error', 'invalid_request'])

/** One display as E2B's result line. */
function resultLine(data: Record<string, string>, main: boolean): Record<string, unknown> {
  const line: Record<string, unknown> = { type: 'result' }
  const extra: Record<string, string> = {}
  for (const [mime, value] of Object.entries(data)) {
    const field = FORMATS[mime]
    if (field === undefined) extra[mime] = value
    else if (field === 'json') {
      try {
        line.json = JSON.parse(value)
      } catch {
        line.json = value
      }
    } else line[field] = value
  }
  // a string's repr, shown as the interpreter shows its text: without the quotes
  const text = line.text
  if (typeof text === 'string' && text.length >= 2 && text.startsWith("'") && text.endsWith("'"))
    line.text = text.slice(1, -1)
  if (Object.keys(extra).length > 0) line.extra = extra
  line.is_main_result = main
  return line
}

/** The lines that end a run: its results, its error, its end (its output came before, as it was printed). */
export function endLines(run: SandboxRun): Array<Record<string, unknown>> {
  const { result } = run
  const lines = run.results.map(({ data, main }) => resultLine(data, main))
  if (result.status !== 'ok' && result.error !== null) {
    const name =
      result.status === 'timeout' ? 'TimeoutError' : result.status === 'memory' ? 'MemoryError' : result.error.type
    lines.push({ type: 'error', name, value: result.error.message, traceback: result.error.traceback ?? '' })
  }
  lines.push({ type: 'end_of_execution' })
  return lines
}

const ndjson = (line: Record<string, unknown>): string => JSON.stringify(line) + '\n'

/** One `/execute`'s answer, fed the run's events; see the module comment. */
export class ExecutionAnswer {
  readonly #reply: FastifyReply
  readonly #slow: NodeJS.Timeout
  #keepalive: NodeJS.Timeout | undefined
  #flushTimer: NodeJS.Timeout | undefined
  #headSent = false
  #count: number | undefined
  #countWritten = false
  #pending: string[] = []
  #pendingBytes = 0
  #done = false

  constructor(reply: FastifyReply) {
    this.#reply = reply
    this.#slow = setTimeout(() => this.#flush(), HEAD_AFTER_MS)
  }

  /** Whether anything of the answer went (its head): a refusal can no longer be a status of its own. */
  get started(): boolean {
    return this.#headSent
  }

  /** One event of the run: its start (its count), its output (written soon), its end (answered at once). */
  event(event: SandboxRunEvent): void {
    if (this.#done) return
    if (event.event === 'running') this.#count = event.execution_count
    else if (event.event === 'output') {
      this.#take({ type: event.stream, text: event.text, timestamp: new Date().toISOString() })
      if (this.#pendingBytes >= FLUSH_BYTES) this.#flush()
      else this.#flushTimer ??= setTimeout(() => this.#flush(), FLUSH_MS)
    }
  }

  /** The run ended: the rest of its lines, and the answer's end. */
  async ended(run: SandboxRun, plain: (code: number, text: string) => FastifyReply): Promise<FastifyReply> {
    this.#count ??= run.execution_count
    if (!this.#headSent && FLEET.has(run.result.status)) {
      this.#stop()
      return plain(503, `${run.result.status}: ${run.result.error?.message ?? 'the fleet could not run it'}`)
    }
    for (const line of endLines(run)) this.#take(line)
    const text = this.#pending.join('')
    this.#stop()
    // a run that ended before anything went: one answer, through Fastify (its hooks, its metrics)
    if (!this.#headSent) return await this.#reply.code(200).type('application/x-ndjson').send(text)
    this.#reply.raw.end(text)
    return this.#reply
  }

  /** The run failed after the answer started: what waits, then E2B's error line, and the end. */
  failed(message: string): FastifyReply {
    this.#take({ type: 'error', name: 'SandboxError', value: message, traceback: '' })
    const text = this.#pending.join('')
    this.#stop()
    this.#reply.raw.end(text)
    return this.#reply
  }

  /** Stops every timer, and drops what waits (the answer is another one, or ends now). */
  abandon(): void {
    this.#stop()
  }

  #take(line: Record<string, unknown>): void {
    if (!this.#countWritten && this.#count !== undefined) {
      this.#countWritten = true
      this.#pending.push(ndjson({ type: 'number_of_executions', execution_count: this.#count }))
    }
    const text = ndjson(line)
    this.#pending.push(text)
    this.#pendingBytes += text.length
  }

  #flush(): void {
    clearTimeout(this.#flushTimer)
    this.#flushTimer = undefined
    if (this.#done || this.#reply.raw.writableEnded || this.#reply.raw.destroyed) return
    if (!this.#headSent) {
      this.#headSent = true
      clearTimeout(this.#slow)
      this.#reply.hijack()
      this.#reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson' })
      this.#keepalive = setInterval(() => this.#reply.raw.write('{"type": "keepalive"}\n'), KEEPALIVE_MS).unref()
    }
    if (this.#pending.length === 0) return
    this.#reply.raw.write(this.#pending.join(''))
    this.#pending = []
    this.#pendingBytes = 0
  }

  #stop(): void {
    this.#done = true
    clearTimeout(this.#slow)
    clearTimeout(this.#flushTimer)
    clearInterval(this.#keepalive)
    this.#flushTimer = undefined
  }
}
