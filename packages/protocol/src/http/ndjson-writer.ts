/**
 * The body of a streamed batch: one JSON line per value, sent as the values come, with the lines
 * that come in one turn of the event loop sent as one chunk. Writing each line on its own makes
 * each a chunk of the HTTP response and a socket write; sandboxes that answer at once make many
 * lines in one turn, and this writes them once. A line waits at most until the end of the turn
 * it was pushed in (`setImmediate`), so a result still goes out as soon as its item finished;
 * lines of items that finish in turns of their own still cost a write each.
 */
import { PassThrough } from 'node:stream'

/** NDJSON lines written to {@link NdjsonWriter.stream}, coalesced per event-loop turn. */
export class NdjsonWriter {
  /** What to send as the response body. */
  readonly stream = new PassThrough()
  #pending = ''
  #scheduled = false
  #ended = false

  /** Queues `value` as one line; it is written at the end of this turn of the event loop, in the order pushed. */
  push(value: unknown): void {
    if (this.#ended) return
    this.#pending += JSON.stringify(value) + '\n'
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(this.#flush)
    }
  }

  /** Writes what is queued and ends the stream. Idempotent; later pushes are dropped. */
  end(): void {
    if (this.#ended) return
    this.#flush()
    this.#ended = true
    this.stream.end()
  }

  readonly #flush = (): void => {
    this.#scheduled = false
    if (this.#pending === '' || this.#ended) return
    const chunk = this.#pending
    this.#pending = ''
    this.stream.write(chunk)
  }
}
