/**
 * The `pyodide` driver: Python as CPython compiled to WebAssembly (Pyodide), each sandbox a
 * Pyodide interpreter inside its own bare V8 isolate (isolated-vm), where no Node API exists:
 * `import js` reaches only the isolate's own globals. Needs nothing but Node and npm.
 *
 * No state leaks between jobs: the interpreter's whole wasm memory is put back to a baseline
 * image after every job (the "fork in wasm" of docs/pyodide-driver-design.md); a job that touched
 * what the image does not hold (the JavaScript FFI, files outside /tmp) retires its sandbox.
 * Packages: the stdlib, plus an operator's zip of pure-Python packages (`pyodidePackages`),
 * optionally imported into the memory image (`pyodidePreimport`). Nothing is fetched.
 */
import type { Language } from '@sandfleet/protocol'
import type { DriverOptions } from './index.ts'
import type { Driver, DriverName, IsolationReport, Sandbox } from './driver.ts'
import { nodeSnapshotDisabled, setIsolateFlags, snapshotFlagMessage } from '../isolates/node-flags.ts'
import { PyodideAssets, type Ivm } from '../isolates/pyodide-assets.ts'
import { PyodideSandbox } from '../isolates/pyodide-sandbox.ts'

/** Python in Pyodide, one isolate per sandbox, in the runner's process. */
export class PyodideDriver implements Driver {
  readonly name: DriverName = 'pyodide'
  readonly languages: readonly Language[] = ['python']
  private assets: PyodideAssets | undefined

  constructor (private readonly options: DriverOptions) {}

  /**
   * Fails when Node runs without --no-node-snapshot, isolated-vm is not built or Pyodide does
   * not boot; otherwise loads Pyodide and its memory snapshot (from the cache, or a cold boot of
   * a few seconds) and says so.
   */
  async check (): Promise<void> {
    if (this.assets?.snapshot !== undefined) return
    if (!nodeSnapshotDisabled()) throw new Error(snapshotFlagMessage('pyodide'))
    setIsolateFlags()
    let ivm: Ivm
    try {
      ivm = (await import('isolated-vm')).default as Ivm
    } catch (err) {
      throw new Error(`isolated-vm is not loadable (${(err as Error).message}); run npm install (it builds isolated-vm from source, needs python3, make and a C++ compiler)`)
    }
    const config = this.options.config
    const assets = PyodideAssets.load(ivm, { packagesZip: config.pyodidePackages, preimport: config.pyodidePreimport, warmup: config.pyodideWarmup })
    await assets.prepareSnapshot()
    this.assets = assets
    this.options.logger.info({ driver: 'pyodide', pyodide: assets.version, snapshot: assets.snapshotSource, packages: this.packages() },
      `pyodide ${assets.version} ready (snapshot ${assets.snapshotSource}); packages: ${this.packages()}`)
  }

  /** What the sandboxes can import, in one line. */
  packages (): string {
    const config = this.options.config
    let what = 'the Python stdlib'
    if (config.pyodidePackages !== '') what += ` and the pure-Python packages in ${config.pyodidePackages}`
    else what += ' only (no pyodidePackages zip configured; nothing is fetched from the network)'
    if (config.pyodidePreimport.length > 0) what += `; imported into the image: ${config.pyodidePreimport.join(', ')}`
    if (config.pyodideWarmup !== '') what += '; a warm-up snippet run into the image'
    return what
  }

  /** A sandbox (one isolate), not started. */
  createSandbox (id: string): Sandbox {
    if (this.assets === undefined) throw new Error('PyodideDriver.createSandbox before check()')
    return new PyodideSandbox(id, this.assets, { softGraceMs: 500, graceMs: this.options.config.graceMs })
  }

  /** What this driver protects against. */
  describe (): IsolationReport {
    return {
      driver: 'pyodide',
      boundary: 'Pyodide (CPython on WebAssembly) in a bare V8 isolate (isolated-vm) in the runner process',
      properties: [
        'no Node API in the sandbox: no process, require, sockets, subprocess or host files; import js sees only the isolate',
        'no state shared between jobs: the wasm memory is restored to a baseline image after each job; a job that used the JS FFI or wrote outside /tmp retires its isolate',
        'timeout by interrupt, then by isolate termination; memory_mb caps wasm memory growth (MemoryError)',
        'not an OS boundary: a V8 or wasm runtime bug exploited by the code reaches the runner process',
        `packages: ${this.packages()}`
      ]
    }
  }

  /** Nothing shared to free (sandboxes dispose their own isolates). */
  async close (): Promise<void> {}
}
