/**
 * NDJSON frames over a byte stream: one JSON object a line. The pyodide driver and its host
 * process talk this way over a pipe on the host's fd 3 (JSON escapes newlines, so a frame never
 * spans a line). Chosen over Node's `fork()` IPC by its CPU per frame (benchmarks/RESULTS.md,
 * "Pyodide in a host process").
 */
import type { Readable, Writable } from 'node:stream'

/** Reads frames from `input` and writes frames to `output`. */
export class FramePipe<In, Out> {
  #buffered: Buffer[] = []
  #ended = false

  /**
   * `onFrame` gets every frame read; `onEnd` is called once when `input` ends, fails or
   * {@link end} is called (a line that is not JSON ends the pipe too: the other side is broken).
   */
  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly onFrame: (frame: In) => void,
    private readonly onEnd: (why: string) => void
  ) {
    input.on('data', (chunk: Buffer) => {
      this.#onData(chunk)
    })
    input.on('end', () => {
      this.#finish('the pipe ended')
    })
    input.on('close', () => {
      this.#finish('the pipe closed')
    })
    input.on('error', (err) => {
      this.#finish(`the pipe failed: ${err.message}`)
    })
    output.on('error', (err) => {
      this.#finish(`the pipe failed: ${err.message}`)
    })
  }

  /** True once the pipe ended. */
  get ended(): boolean {
    return this.#ended
  }

  /** Writes one frame; false when the pipe has ended (the frame is dropped). */
  send(frame: Out): boolean {
    if (this.#ended) return false
    this.output.write(JSON.stringify(frame) + '\n')
    return true
  }

  /** Stops reading and ends the output. Idempotent. */
  end(): void {
    if (this.#ended) return
    this.output.end()
    this.#finish('closed by this side')
  }

  #onData(chunk: Buffer): void {
    let start = 0
    let nl = chunk.indexOf(10)
    while (nl !== -1 && !this.#ended) {
      let line: Buffer
      if (this.#buffered.length > 0) {
        this.#buffered.push(chunk.subarray(start, nl))
        line = Buffer.concat(this.#buffered)
        this.#buffered = []
      } else line = chunk.subarray(start, nl)
      if (line.length > 0) this.#onLine(line)
      start = nl + 1
      nl = chunk.indexOf(10, start)
    }
    if (start < chunk.length) this.#buffered.push(chunk.subarray(start))
  }

  #onLine(line: Buffer): void {
    let frame: In
    try {
      frame = JSON.parse(line.toString('utf8')) as In
    } catch {
      this.#finish('the other side sent a line that is not JSON')
      return
    }
    this.onFrame(frame)
  }

  #finish(why: string): void {
    if (this.#ended) return
    this.#ended = true
    this.#buffered = []
    this.onEnd(why)
  }
}
