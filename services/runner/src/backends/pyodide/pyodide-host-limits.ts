/**
 * The flags and memory ceiling of a pyodide host process, from the runner's configuration.
 *
 * - `--no-node-snapshot`: isolated-vm crashes a process started from Node's start-up snapshot.
 * - `--no-concurrent-recompilation`: otherwise a process deleting isolates at exit can hang (see
 *   node-flags.ts).
 * - `--wasm-max-mem-pages`: caps every wasm memory of the host (isolated-vm's `memoryLimit`
 *   does not count wasm linear memory): the largest `memory_mb` a job may ask for, plus room for
 *   the interpreter's image. The patched `growMemory` caps each job below that; this is the
 *   backstop of the whole process.
 * - `--max-old-space-size`: the host's own JavaScript heap (frames, assets); each isolate's
 *   heap is capped by its own `memoryLimit`.
 * - `GLIBC_TUNABLES` (its environment): copies of 1 MiB and more bypass the caches (glibc's
 *   non-temporal stores). After every job each sandbox copies its whole baseline image back into
 *   its wasm memory; below glibc's own threshold (which glibc sizes from the caches) that copy
 *   reads every destination line first and evicts what the next job needs (the figures:
 *   benchmarks/RESULTS.md, "Pyodide's restore through non-temporal stores"). A threshold the
 *   operator set is kept.
 * - `memoryBytes`: the ceiling of the whole host (a cgroup's memory limit, where the runner can
 *   make one): each sandbox's share (`sandboxMemoryMb`, or its largest job plus its isolate's
 *   heap and image) times the sandboxes it holds, plus the host's own heap.
 */
import { NO_NODE_SNAPSHOT } from '../../kits/isolate/node-flags.ts'
import { PYODIDE_ISOLATE_HEAP_MB } from './pyodide-assets.ts'
import type { PyodideSettings } from './pyodide-config.ts'

/**
 * Room in each wasm memory for the interpreter's image (Pyodide's baseline is ~20 MB; preimported packages add to it).
 */
export const IMAGE_HEADROOM_MB = 512
/** The host's own JavaScript heap. */
export const HOST_HEAP_MB = 1024
/** Most pages a wasm32 memory can have (4 GiB). */
const WASM32_PAGES = 65_536
/** The glibc tunable of the host: copies from this size on use non-temporal stores. */
export const NON_TEMPORAL_TUNABLE = 'glibc.cpu.x86_non_temporal_threshold=0x100000'

/** A host's flags and ceiling. */
export interface HostLimits {
  /** Node's arguments before the entry script. */
  nodeArgs: string[]
  /** Variables the host's environment gets beside the runner's. */
  env: Record<string, string>
  /** Pages (64 KiB) each wasm memory of the host may have. */
  wasmMaxPages: number
  /** Ceiling of the whole host process, for its cgroup. */
  memoryBytes: number
}

/** The limits of a host that holds at most `sandboxes` sandboxes at once. */
export function hostLimits(
  config: Pick<PyodideSettings, 'maxMemoryMb' | 'sandboxMemoryMb'>,
  sandboxes: number
): HostLimits {
  const wasmMaxPages = Math.min(WASM32_PAGES, (config.maxMemoryMb + IMAGE_HEADROOM_MB) * 16)
  const shareMb =
    config.sandboxMemoryMb > 0
      ? config.sandboxMemoryMb
      : config.maxMemoryMb + IMAGE_HEADROOM_MB + PYODIDE_ISOLATE_HEAP_MB
  return {
    nodeArgs: [
      NO_NODE_SNAPSHOT,
      '--no-concurrent-recompilation',
      `--wasm-max-mem-pages=${wasmMaxPages}`,
      `--max-old-space-size=${HOST_HEAP_MB}`
    ],
    env: { GLIBC_TUNABLES: withTunable(process.env.GLIBC_TUNABLES, NON_TEMPORAL_TUNABLE) },
    wasmMaxPages,
    memoryBytes: (sandboxes * shareMb + HOST_HEAP_MB) * 1024 * 1024
  }
}

/** `tunables` (glibc's `name=value:name=value`) with `tunable` added, unless it already sets that name. */
export function withTunable(tunables: string | undefined, tunable: string): string {
  if (tunables === undefined || tunables === '') return tunable
  const name = tunable.slice(0, tunable.indexOf('='))
  return tunables.split(':').some((t) => t.startsWith(`${name}=`)) ? tunables : `${tunables}:${tunable}`
}
