import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CompileCache, compileKeyOf, type CachedCompile } from '../../src/judge/compile-cache.ts'

/** An entry of `bytes` bytes whose compile took `ms`. */
const entry = (bytes: number, ms = 500): CachedCompile => ({ binary: Buffer.alloc(bytes), duration_ms: ms })

const key = (source: string, over: Partial<Parameters<typeof compileKeyOf>[0]> = {}): string =>
  compileKeyOf({ language: 'cpp', version: '12.2.0', argv: ['g++', '-O2', 'main.cpp'], source, ...over })

test('the key names what made the binary: language, compiler version, argv and source', () => {
  const base = key('int main(){}')
  assert.equal(key('int main(){}'), base)
  assert.notEqual(key('int main(){ }'), base)
  assert.notEqual(key('int main(){}', { version: '12.3.0' }), base)
  assert.notEqual(key('int main(){}', { argv: ['g++', '-O3', 'main.cpp'] }), base)
  assert.notEqual(key('int main(){}', { language: 'c' }), base)
  assert.notEqual(key('', { argv: ['g++', '-O2'] }), key('', { argv: ['g++', '-O', '2'] }), 'parts never run together')
})

test('a hit gives the bytes kept and what their compile cost, and counts; a miss counts', () => {
  const cache = new CompileCache(1000)
  assert.equal(cache.get('a'), undefined)
  cache.set('a', { binary: Buffer.from('ELF-a'), duration_ms: 1234.5, cpu_ms: 1100 })
  assert.deepEqual(cache.get('a'), { binary: Buffer.from('ELF-a'), duration_ms: 1234.5, cpu_ms: 1100 })
  assert.deepEqual(cache.stats(), { hits: 1, misses: 1, bytes: 5, entries: 1, evictions: 0 }, 'bytes: the binaries')
})

test('bounded in bytes: the least recently used goes first; one larger than the budget is not kept', () => {
  const cache = new CompileCache(300)
  for (const k of ['a', 'b', 'c']) cache.set(k, entry(100))
  cache.get('a') // a is now the most recently used: b goes first
  cache.set('d', entry(100))
  assert.equal(cache.get('b'), undefined)
  assert.ok(cache.get('a') !== undefined && cache.get('c') !== undefined && cache.get('d') !== undefined)
  assert.equal(cache.stats().bytes, 300)
  assert.equal(cache.stats().evictions, 1)
  cache.set('huge', entry(301))
  assert.equal(cache.get('huge'), undefined)
  assert.equal(cache.stats().entries, 3)
  cache.set('a', entry(50, 900)) // replaced in place, with its new cost
  assert.equal(cache.stats().bytes, 250)
  assert.equal(cache.get('a')?.duration_ms, 900)
  const none = new CompileCache(0)
  none.set('x', entry(1))
  assert.equal(none.get('x'), undefined, 'a budget of 0 keeps nothing')
})
