/**
 * The `javascript` driver: JavaScript in pooled V8 isolates (isolated-vm), a fresh context per
 * job. No Node API exists in an isolate (no `require`, `process`, `import()`, network or file
 * system), and the driver injects no host function: console output, stdin and files live in the
 * context (js-harness.js) and are copied out when the job ends.
 *
 * - `memory_mb` is the isolate's heap limit (`memoryLimit`); an isolate disposed by it gives
 *   `memory` and is replaced (`oom`: isolated-vm leaves nothing of it). An allocation the isolate
 *   refuses (an `ArrayBuffer` past the limit) gives `memory` too, and the isolate serves on. A job
 *   asking for another limit than the isolate's gets the isolate rebuilt with it (a bare isolate
 *   starts in a few milliseconds).
 * - `timeout_ms` is enforced by isolated-vm inside the isolate (it terminates the call; the
 *   isolate lives on, and V8 drops the microtasks left queued), and for code that returned a
 *   promise, by the sandbox's wait for it; either gives `timeout` with what the code wrote, the
 *   job's context is let go and the isolate takes the next job in a fresh one.
 * - `cpu_ms`: the isolate's CPU (isolated-vm's `cpuTime`, the thread CPU clock) over the job.
 */
import { availableParallelism } from 'node:os'
import type { Language, RuntimeEnvironment } from '@sandfleet/protocol'
import { LIMITS } from '@sandfleet/protocol'
import type { Driver, DriverName, DriverOptions, IsolationReport, Sandbox } from '../../sandbox/contract.ts'
import type { SandboxLife } from '../../sandbox/retire-reasons.ts'
import { nodeSnapshotDisabled, setIsolateFlags, snapshotFlagMessage } from '../../kits/isolate/node-flags.ts'
import { JavascriptSandbox, loadIsolateSources, type IsolateSources, type Ivm } from './javascript-sandbox.ts'

/**
 * isolated-vm runs isolates' work on a pool of cores + 1 threads; a call into an isolate when all
 * of them are busy gets a thread started for it alone (and ended after it). So a pool of more
 * isolates than that starts threads all along under load: on 2 cores, 4 isolates cost 4–11 %
 * more CPU per job than 3 (benchmarks/RESULTS.md), with no more cores to run on.
 */
const ISOLATE_THREADS = availableParallelism() + 1

/** JavaScript in isolated-vm isolates, in the runner's process. */
export class JavascriptDriver implements Driver {
  readonly name: DriverName = 'javascript'
  readonly languages: readonly Language[] = ['javascript']
  /** As many isolates as isolated-vm has threads for. */
  readonly maxPoolSize = ISOLATE_THREADS
  /** A timeout and a refused allocation keep the isolate; a heap over its limit ends it (isolated-vm disposes it). */
  readonly life: SandboxLife = {
    noun: 'isolate',
    keeps: ['timeout', 'memory'],
    retires: ['oom'],
    says: { oom: "a job's heap goes over memory_mb (isolated-vm disposes the isolate)" }
  }

  /** isolated-vm stops a job at `timeout_ms` itself; reading what it wrote is quick. */
  readonly stopMs = 0
  private ivm: Ivm | undefined
  private sources: IsolateSources | undefined

  constructor(private readonly options: DriverOptions) {}

  /** Fails when Node runs without --no-node-snapshot or isolated-vm is not built. */
  async check(): Promise<void> {
    if (!nodeSnapshotDisabled()) throw new Error(snapshotFlagMessage('javascript'))
    // Its contexts get no WebAssembly: V8 need not build it (unless another driver here wants it).
    setIsolateFlags({ webAssembly: false })
    try {
      this.ivm = (await import('isolated-vm')).default as Ivm
    } catch (err) {
      throw new Error(
        `isolated-vm is not loadable (${(err as Error).message}); run npm install (it builds isolated-vm from source, needs python3, make and a C++ compiler)`
      )
    }
    this.sources = loadIsolateSources()
  }

  /** A sandbox (one isolate), not started. */
  createSandbox(id: string): Sandbox {
    if (this.ivm === undefined || this.sources === undefined)
      throw new Error('JavascriptDriver.createSandbox before check()')
    return new JavascriptSandbox(id, this.ivm, this.sources, { defaultMemoryMb: LIMITS.defaultMemoryMb })
  }

  /** V8, the runner's own (isolated-vm runs its isolates on the Node process's V8); nothing to import. */
  environment(): RuntimeEnvironment {
    return { runtime: `V8 (isolated-vm, Node ${process.versions.node})`, version: process.versions.v8, packages: {} }
  }

  /** What this driver protects against. */
  describe(): IsolationReport {
    return {
      driver: 'javascript',
      boundary: 'V8 isolate (isolated-vm) in the runner process, fresh context per job',
      properties: [
        'no Node API in the sandbox: no require, process, import(), network or file system; no host function injected',
        'heap limit per job (memory_mb) and timeout, enforced inside the isolate',
        'no state shared between jobs (a new context each job)',
        "not an OS boundary: a V8 bug exploited by the code reaches the runner process (unlike pyodide's isolates, these stay in the runner: a round trip to a host process would take a large share of a call's 1 ms budget)"
      ]
    }
  }

  /** Nothing shared to free (sandboxes dispose their own isolates). */
  async close(): Promise<void> {}
}
