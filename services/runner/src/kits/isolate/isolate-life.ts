/** What the isolate sandboxes (javascript, pyodide) share about their isolate's life: its stats and its disposal. */
import type IvmModule from 'isolated-vm'
import type { SandboxStats } from '../../sandbox/contract.ts'

/** Jobs run and the isolate's memory (JavaScript heap plus what it holds outside, such as wasm memory). */
export function isolateStats(isolate: IvmModule.Isolate | undefined, jobs: number): SandboxStats {
  const stats: SandboxStats = { jobs }
  try {
    if (isolate?.isDisposed === false) {
      const heap = isolate.getHeapStatisticsSync()
      stats.memoryBytes = heap.used_heap_size + heap.externally_allocated_size
    }
  } catch {}
  return stats
}

/**
 * Disposes `isolate` once `inFlight` (work the runner started inside it: disposing under it can
 * crash the process) settled, waiting at most a second for it.
 */
export async function disposeAfter(
  isolate: IvmModule.Isolate | undefined,
  inFlight: Promise<unknown> | undefined
): Promise<void> {
  if (inFlight !== undefined)
    await Promise.race([inFlight.catch(() => {}), new Promise((resolve) => setTimeout(resolve, 1000).unref())])
  if (isolate?.isDisposed === false) isolate.dispose()
}
