import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { FramePipe } from '../../../src/backends/pyodide/frame-pipe.ts'

function pipe(): {
  input: PassThrough
  output: PassThrough
  frames: unknown[]
  ends: string[]
  fp: FramePipe<unknown, unknown>
} {
  const input = new PassThrough()
  const output = new PassThrough()
  const frames: unknown[] = []
  const ends: string[] = []
  const fp = new FramePipe(
    input,
    output,
    (f) => {
      frames.push(f)
    },
    (why) => {
      ends.push(why)
    }
  )
  return { input, output, frames, ends, fp }
}

const tick = async (): Promise<void> => {
  await new Promise((resolve) => setImmediate(resolve))
}

test('frame-pipe: frames split across chunks and several in one chunk all arrive whole, in order', async () => {
  const { input, frames } = pipe()
  const a = JSON.stringify({ op: 'exec', code: 'print("a\\nb")', s: 'é'.repeat(100) })
  const bytes = Buffer.from(`${a}\n{"n":2}\n{"n":3}\n`)
  // Cut inside a multi-byte character and inside a frame.
  for (const [from, to] of [
    [0, 7],
    [7, 140],
    [140, bytes.length - 3],
    [bytes.length - 3, bytes.length]
  ])
    input.write(bytes.subarray(from, to))
  await tick()
  assert.deepEqual(frames, [JSON.parse(a), { n: 2 }, { n: 3 }])
})

test('frame-pipe: send writes one line per frame; a frame sent after the end is dropped', async () => {
  const { output, fp, ends } = pipe()
  const lines: string[] = []
  output.setEncoding('utf8')
  output.on('data', (s: string) => {
    lines.push(s)
  })
  assert.equal(fp.send({ a: 'x\ny' }), true)
  fp.end()
  assert.equal(fp.send({ b: 1 }), false)
  await tick()
  assert.deepEqual(lines.join(''), '{"a":"x\\ny"}\n')
  assert.deepEqual(ends, ['closed by this side'])
  assert.equal(fp.ended, true)
})

test('frame-pipe: a line that is not JSON ends the pipe, once, and later frames are not delivered', async () => {
  const { input, frames, ends } = pipe()
  input.write('{"n":1}\nnot json\n{"n":2}\n')
  input.end()
  await tick()
  assert.deepEqual(frames, [{ n: 1 }])
  assert.deepEqual(ends, ['the other side sent a line that is not JSON'])
})

test('frame-pipe: the end of the input ends the pipe', async () => {
  const { input, ends } = pipe()
  input.end()
  await tick()
  assert.deepEqual(ends, ['the pipe ended'])
})
