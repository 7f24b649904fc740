import { test } from 'node:test'
import assert from 'node:assert/strict'
import { progressReporter } from '../../src/run/progress.ts'
import type { Sample } from '../../src/run/engine.ts'

const sample = (tS: number, done: number): Sample => ({
  tS,
  done,
  right: done,
  wrong: 0,
  failed: 0,
  outstanding: 300 - done,
  onWire: 4
})

test('progress off a terminal: a 9 s step of 300 calls shows each quarter done and its end, not only its first line', () => {
  const lines: string[] = []
  const progress = progressReporter(
    {
      write: (t) => {
        lines.push(t)
      },
      isTTY: false
    },
    300
  )
  for (let i = 0; i <= 36; i++) progress.sample(sample(i * 0.25, Math.min(300, Math.round((i * 300) / 35))))
  progress.end()
  const done = lines.map((l) => /done (\d+)\/300/.exec(l)?.[1])
  assert.ok(
    lines.every((l) => l.endsWith('\n')),
    'whole lines'
  )
  assert.equal(done[0], '0')
  assert.equal(done.at(-1), '300', 'the last state is shown')
  assert.ok(lines.length >= 5 && lines.length <= 6, `a line a quarter, no flood: ${lines.join('')}`)
})

test('progress off a terminal: the end is printed once, however many samples the run ends with', () => {
  const lines: string[] = []
  const progress = progressReporter(
    {
      write: (t) => {
        lines.push(t)
      },
      isTTY: false
    },
    4
  )
  progress.sample(sample(0, 0))
  progress.sample(sample(1, 4))
  progress.sample(sample(1.1, 4)) // the engine's last sample, after the last answer
  progress.end()
  assert.deepEqual(
    lines.map((l) => /done (\d)\/4/.exec(l)?.[1]),
    ['0', '4']
  )
})

test('progress off a terminal on a long run: a line every 10 s, and the end', () => {
  const lines: string[] = []
  const progress = progressReporter(
    {
      write: (t) => {
        lines.push(t)
      },
      isTTY: false
    },
    undefined
  )
  for (let t = 0; t <= 35; t += 0.5) progress.sample(sample(t, Math.floor(t * 10)))
  progress.end()
  assert.deepEqual(
    lines.map((l) => l.split(' s ')[0]),
    ['0.0', '10.0', '20.0', '30.0', '35.0']
  )
})

test('progress on a terminal: one line rewritten in place, ended by a newline', () => {
  const out: string[] = []
  const progress = progressReporter(
    {
      write: (t) => {
        out.push(t)
      },
      isTTY: true
    },
    10
  )
  progress.sample(sample(0, 0))
  progress.sample(sample(0.25, 10))
  progress.end()
  assert.ok(out.slice(0, 2).every((t) => t.startsWith('\r\x1b[2K')))
  assert.equal(out.at(-1), '\n')
})
