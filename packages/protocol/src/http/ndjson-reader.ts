/** Reads an NDJSON body (a streamed batch) as it arrives: one parsed value per line. */

/** A response body: undici's, or any Node readable stream. */
export interface NdjsonBody extends AsyncIterable<unknown> {
  setEncoding(encoding: 'utf8'): unknown
}

/**
 * Hands each line of `body` to `onValue`, parsed, as soon as its newline arrived; blank lines
 * are skipped and a last line without a newline is read too. Resolves when the body ended;
 * rejects with the body's error, or the SyntaxError of a line that is not JSON (then nothing
 * after it is read), or what `onValue` threw.
 */
export async function readNdjson(body: NdjsonBody, onValue: (value: unknown) => void): Promise<void> {
  body.setEncoding('utf8')
  let rest = ''
  for await (const chunk of body) {
    rest += chunk as string
    let start = 0
    let nl: number
    while ((nl = rest.indexOf('\n', start)) >= 0) {
      const line = rest.slice(start, nl)
      start = nl + 1
      if (line.trim() !== '') onValue(JSON.parse(line))
    }
    rest = rest.slice(start)
  }
  if (rest.trim() !== '') onValue(JSON.parse(rest))
}
