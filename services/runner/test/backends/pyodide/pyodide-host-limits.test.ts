import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  HOST_HEAP_MB,
  hostLimits,
  IMAGE_HEADROOM_MB,
  NON_TEMPORAL_TUNABLE,
  withTunable
} from '../../../src/backends/pyodide/pyodide-host-limits.ts'
import { PYODIDE_ISOLATE_HEAP_MB } from '../../../src/backends/pyodide/pyodide-assets.ts'

test('pyodide host limits: the host gets the isolate flags, a wasm memory cap above the largest job, and its own heap cap', () => {
  const l = hostLimits({ maxMemoryMb: 256, sandboxMemoryMb: 0 }, 5)
  assert.equal(l.wasmMaxPages, (256 + IMAGE_HEADROOM_MB) * 16)
  assert.deepEqual(l.nodeArgs, [
    '--no-node-snapshot',
    '--no-concurrent-recompilation',
    `--wasm-max-mem-pages=${l.wasmMaxPages}`,
    `--max-old-space-size=${HOST_HEAP_MB}`
  ])
  assert.equal(l.memoryBytes, (5 * (256 + IMAGE_HEADROOM_MB + PYODIDE_ISOLATE_HEAP_MB) + HOST_HEAP_MB) * 1024 * 1024)
})

test("pyodide host limits: wasm pages never pass wasm32's 4 GiB; sandboxMemoryMb sets each sandbox's share of the ceiling", () => {
  const l = hostLimits({ maxMemoryMb: 65_536, sandboxMemoryMb: 300 }, 3)
  assert.equal(l.wasmMaxPages, 65_536)
  assert.equal(l.memoryBytes, (3 * 300 + HOST_HEAP_MB) * 1024 * 1024)
})

test('pyodide host limits: the host copies its images with non-temporal stores, unless the operator set that threshold', () => {
  assert.equal(withTunable(undefined, NON_TEMPORAL_TUNABLE), NON_TEMPORAL_TUNABLE)
  assert.equal(withTunable('', NON_TEMPORAL_TUNABLE), NON_TEMPORAL_TUNABLE)
  assert.equal(
    withTunable('glibc.malloc.arena_max=2', NON_TEMPORAL_TUNABLE),
    `glibc.malloc.arena_max=2:${NON_TEMPORAL_TUNABLE}`
  )
  const own = 'glibc.malloc.arena_max=2:glibc.cpu.x86_non_temporal_threshold=0x800000'
  assert.equal(withTunable(own, NON_TEMPORAL_TUNABLE), own)
  assert.match(
    hostLimits({ maxMemoryMb: 256, sandboxMemoryMb: 0 }, 1).env.GLIBC_TUNABLES,
    /glibc\.cpu\.x86_non_temporal_threshold=/
  )
})
