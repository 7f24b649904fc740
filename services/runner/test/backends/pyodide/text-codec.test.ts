// The isolates' own UTF-8 decoder (text-codec.js) against Node's: the same text for the same bytes,
// invalid ones included (what a job prints on pyodide reaches the caller through it).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import vm from 'node:vm'

const SOURCE = readFileSync(new URL('../../../src/kits/isolate/text-codec.js', import.meta.url), 'utf8')

function isolateDecoder(): { decode: (bytes: Uint8Array) => string } {
  const context = vm.createContext({})
  vm.runInContext(SOURCE, context)
  return new context.TextDecoder()
}

test('invalid UTF-8 decodes as Node (and Python\'s errors="replace") decode it: one U+FFFD per maximal valid prefix', () => {
  const mine = isolateDecoder()
  const node = new TextDecoder()
  const named = [
    [0xed, 0xa0, 0x80, 0x7a], // a surrogate
    [0xe0, 0x80, 0x80], // overlong
    [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
    [0xf0, 0x80, 0x80, 0x80], // overlong
    [0xc3, 0x28],
    [0xff, 0xfe],
    [0xe2, 0x82],
    [0xc0, 0xaf],
    [0xf0, 0x9f, 0x98, 0x80],
    [0xe2, 0x82, 0xac],
    [0x61, 0xff, 0xfe, 0x62, 0xc3, 0x28, 0x0a]
  ]
  for (const bytes of named)
    assert.equal(
      mine.decode(Uint8Array.from(bytes)),
      node.decode(Uint8Array.from(bytes)),
      bytes.map((b) => b.toString(16)).join(' ')
    )
  // seeded: every sequence of up to 7 bytes drawn from the boundaries of the second-byte ranges
  const pieces = [0x80, 0xbf, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xa0, 0x9f, 0x90, 0x8f, 0x41, 0xff]
  let seed = 12345
  const mismatches: string[] = []
  for (let i = 0; i < 50_000; i++) {
    const bytes = new Uint8Array(1 + (i % 7))
    for (let j = 0; j < bytes.length; j++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff
      bytes[j] = pieces[seed % pieces.length]
    }
    if (mine.decode(bytes) !== node.decode(bytes)) mismatches.push([...bytes].map((b) => b.toString(16)).join(' '))
  }
  assert.deepEqual(mismatches.slice(0, 5), [], `${mismatches.length} of 50000 decoded otherwise`)
})
