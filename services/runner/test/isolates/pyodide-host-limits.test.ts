import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HOST_HEAP_MB, hostLimits, IMAGE_HEADROOM_MB } from '../../src/isolates/pyodide-host-limits.ts'
import { PYODIDE_ISOLATE_HEAP_MB } from '../../src/isolates/pyodide-assets.ts'

test('pyodide host limits: the host gets the isolate flags, a wasm memory cap above the largest job, and its own heap cap', () => {
  const l = hostLimits({ maxMemoryMb: 256, sandboxMemoryMb: 0 }, 5)
  assert.equal(l.wasmMaxPages, (256 + IMAGE_HEADROOM_MB) * 16)
  assert.deepEqual(l.nodeArgs, ['--no-node-snapshot', '--no-concurrent-recompilation', `--wasm-max-mem-pages=${l.wasmMaxPages}`, `--max-old-space-size=${HOST_HEAP_MB}`])
  assert.equal(l.memoryBytes, (5 * (256 + IMAGE_HEADROOM_MB + PYODIDE_ISOLATE_HEAP_MB) + HOST_HEAP_MB) * 1024 * 1024)
})

test('pyodide host limits: wasm pages never pass wasm32\'s 4 GiB; sandboxMemoryMb sets each sandbox\'s share of the ceiling', () => {
  const l = hostLimits({ maxMemoryMb: 65_536, sandboxMemoryMb: 300 }, 3)
  assert.equal(l.wasmMaxPages, 65_536)
  assert.equal(l.memoryBytes, (3 * 300 + HOST_HEAP_MB) * 1024 * 1024)
})
