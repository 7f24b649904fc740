import { test } from 'node:test'
import assert from 'node:assert/strict'
import { NdjsonWriter, readNdjson } from '../../src/http/index.ts'

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

test("lines pushed in one turn of the event loop go out as one chunk; a later turn's lines go out before the stream ends", async () => {
  const lines = new NdjsonWriter()
  const chunks: string[] = []
  lines.stream.on('data', (c: Buffer) => chunks.push(c.toString()))
  lines.push({ index: 0 })
  lines.push({ index: 1 })
  assert.deepEqual(chunks, [], 'nothing written before the turn ends')
  await turn()
  await turn()
  assert.deepEqual(chunks, ['{"index":0}\n{"index":1}\n'])
  lines.push({ index: 2, result: { stdout: 'a\nb' } })
  await turn()
  await turn()
  assert.deepEqual(
    chunks.slice(1),
    ['{"index":2,"result":{"stdout":"a\\nb"}}\n'],
    'streamed while the batch still runs'
  )
})

test('end writes what is still queued, then ends the stream; later pushes and a second end are ignored', async () => {
  const lines = new NdjsonWriter()
  let body = ''
  lines.stream.on('data', (c: Buffer) => {
    body += c.toString()
  })
  const ended = new Promise((resolve) => lines.stream.on('end', resolve))
  lines.push({ index: 1 })
  lines.end()
  lines.push({ index: 2 })
  lines.end()
  await ended
  await turn()
  assert.equal(body, '{"index":1}\n')
})

test('the reader gives each line as it arrives, skips blank lines, reads a last line without a newline, and throws at one that is not JSON', async () => {
  const chunks = ['{"a":1}\n\n{"b"', ':2}\n  \n{"c":3}']
  const body = Object.assign(
    (async function* () {
      yield* chunks
    })(),
    { setEncoding: () => {} }
  )
  const seen: unknown[] = []
  await readNdjson(body, (v) => {
    seen.push(v)
  })
  assert.deepEqual(seen, [{ a: 1 }, { b: 2 }, { c: 3 }])
  const bad = Object.assign(
    (async function* () {
      yield '{"a":1}\n{oops\n{"c":3}\n'
    })(),
    { setEncoding: () => {} }
  )
  const before: unknown[] = []
  await assert.rejects(
    readNdjson(bad, (v) => {
      before.push(v)
    }),
    SyntaxError
  )
  assert.deepEqual(before, [{ a: 1 }], 'nothing after the bad line is read')
})
