/**
 * The `pyodide` driver: Python as CPython compiled to WebAssembly (Pyodide), each sandbox a
 * Pyodide interpreter inside its own bare V8 isolate (isolated-vm), where no Node API exists:
 * `import js` reaches only the isolate's own globals. Needs nothing but Node and npm.
 *
 * The isolates live in a host process, a child of the runner (pyodide-host-main.ts),
 * started with the V8 flags they need and a memory ceiling that apply to it alone
 * (pyodide-host-limits.ts): a crash of the host is not a crash of the runner. Its jobs
 * in flight are answered `infra_error`, its idle sandboxes are replaced at once, and the next
 * sandbox to start starts a new host. The runner's sandboxes are proxies
 * (remote-pyodide-sandbox.ts) talking to it over a pipe.
 *
 * No state leaks between jobs: the interpreter's whole wasm memory is put back to a baseline
 * image after every job (the "fork in wasm" of docs/pyodide-driver-design.md); a job that touched
 * what the image does not hold (the JavaScript FFI, files outside /tmp) retires its sandbox.
 * Packages: the stdlib, plus an operator's zip of pure-Python packages (`pyodidePackages`),
 * optionally imported into the memory image (`pyodidePreimport`). Nothing is fetched.
 */
import { GRACES, type Language, type RuntimeEnvironment, type SandboxManifest } from '@sandfleet/protocol'
import type { Driver, DriverName, DriverOptions, IsolationReport, Sandbox } from '../../sandbox/contract.ts'
import type { SandboxLife } from '../../sandbox/retire-reasons.ts'
import { CgroupHost, type SandboxCgroup } from '../../kits/linux/cgroups.ts'
import { PyodideHost } from './pyodide-host.ts'
import type { PyodideSettings } from './pyodide-config.ts'
import { HOST_HEAP_MB, hostLimits, type HostLimits } from './pyodide-host-limits.ts'
import { RemotePyodideSandbox } from './remote-pyodide-sandbox.ts'

export interface PyodideDriverOptions extends DriverOptions<PyodideSettings> {
  /**
   * How long a job has after its soft stop (SIGTERM through the interrupt buffer, at
   * `timeout_ms`) before isolated-vm stops it hard and its sandbox is retired.
   * `GRACES.softStopMs` unless given.
   */
  softStopMs?: number
}

/** Python in Pyodide, one isolate per sandbox, in a host process that is a child of the runner. */
export class PyodideDriver implements Driver {
  readonly name: DriverName = 'pyodide'
  readonly languages: readonly Language[] = ['python']
  readonly #options: DriverOptions<PyodideSettings>
  readonly #softStopMs: number
  /**
   * The host's own stop: the interrupt at `timeout_ms`, isolated-vm's hard timeout `softStopMs`
   * later, then reading what the job wrote and disposing the isolate (`GRACES.pyodideHostSlackMs`).
   */
  readonly stopMs: number
  readonly #limits: HostLimits
  /**
   * A soft-stopped timeout and a MemoryError keep the isolate (pyodide has no signals: no job ends killed); what the
   * memory image cannot put back retires it (pyodide-sandbox.ts).
   */
  readonly life: SandboxLife = {
    noun: 'isolate',
    keeps: ['timeout', 'memory'],
    retires: ['ffi', 'files', 'grown', 'hard_stop', 'broken', 'oom'],
    says: { oom: "the isolate's JavaScript heap goes over its limit", broken: 'the interpreter or its restore fails' }
  }
  #live: PyodideHost | undefined
  #starting: Promise<PyodideHost> | undefined
  #cgroups: CgroupHost | undefined
  #ceiling: 'cgroup' | 'none' | undefined
  #hostsStarted = 0
  /** Cgroups of exited hosts being removed (close waits for them). */
  readonly #removing = new Set<Promise<void>>()
  #closed = false

  constructor(options: PyodideDriverOptions) {
    this.#options = options
    this.#softStopMs = options.softStopMs ?? GRACES.softStopMs
    this.stopMs = this.#softStopMs + GRACES.pyodideHostSlackMs
    // The pool's sandboxes, and one more: a replacement starts while the sandbox it replaces closes.
    this.#limits = hostLimits(options.config, options.config.poolSize + 1)
  }

  /**
   * Starts the host process, which loads Pyodide and its memory snapshot (from the cache, or a
   * cold boot of a few seconds) and says so; fails with why it did not come up (isolated-vm not
   * built, Pyodide missing, a package zip that does not load).
   */
  async check(): Promise<void> {
    const host = await this.host()
    const info = host.info
    this.#options.logger.info(
      {
        driver: 'pyodide',
        pyodide: info?.pyodide,
        snapshot: info?.snapshot,
        hostPid: host.pid,
        bootMs: info?.bootMs,
        packages: this.packages(),
        ceiling: this.#ceilingText()
      },
      `pyodide ${info?.pyodide ?? '?'} ready in host process ${String(host.pid)} (snapshot ${info?.snapshot ?? '?'}); packages: ${this.packages()}`
    )
  }

  /** The live host process, started when there is none (callers at the same time share one start). */
  async host(): Promise<PyodideHost> {
    if (this.#closed) throw new Error('the pyodide driver is closed')
    if (this.#live?.alive === true) return this.#live
    this.#starting ??= this.#startHost().finally(() => {
      this.#starting = undefined
    })
    return await this.#starting
  }

  async #startHost(): Promise<PyodideHost> {
    const config = this.#options.config
    const n = ++this.#hostsStarted
    if (this.#ceiling === undefined) {
      this.#cgroups = await CgroupHost.open(config.id)
      if ((this.#cgroups?.swept.length ?? 0) > 0)
        this.#options.logger.warn(
          { driver: 'pyodide', stale: this.#cgroups?.swept.length },
          'removed the cgroups of runners gone from this host'
        )
      this.#ceiling = this.#cgroups !== undefined ? 'cgroup' : 'none'
    }
    let cgroup: SandboxCgroup | undefined
    try {
      cgroup = this.#cgroups?.create(`pyodide-host-${n}`, { memoryBytes: this.#limits.memoryBytes, pids: 0 })
    } catch (err) {
      this.#options.logger.warn(
        { driver: 'pyodide', err: (err as Error).message },
        'pyodide host: no cgroup could be made; its ceiling is its flags only'
      )
    }
    try {
      const host = await PyodideHost.start({
        init: {
          packagesZip: config.pyodidePackages,
          preimport: config.pyodidePreimport,
          warmup: config.pyodideWarmup,
          softGraceMs: this.#softStopMs
        },
        nodeArgs: this.#limits.nodeArgs,
        env: this.#limits.env,
        ...(cgroup !== undefined ? { wrap: cgroup.wrap.bind(cgroup) } : {}),
        logger: this.#options.logger
      })
      host.onExit(() => {
        if (cgroup !== undefined) this.#remove(cgroup)
      })
      if (this.#closed) {
        await host.close()
        throw new Error('the pyodide driver closed while its host started')
      }
      this.#live = host
      return host
    } catch (err) {
      await cgroup?.remove()
      throw new Error(`the pyodide host process did not start: ${(err as Error).message}`, { cause: err })
    }
  }

  #remove(cgroup: SandboxCgroup): void {
    const removing = cgroup.remove().finally(() => {
      this.#removing.delete(removing)
    })
    this.#removing.add(removing)
  }

  /** What the sandboxes can import, in one line. */
  packages(): string {
    const config = this.#options.config
    let what = 'the Python stdlib'
    if (config.pyodidePackages !== '') what += ` and the pure-Python packages in ${config.pyodidePackages}`
    else what += ' only (no pyodidePackages zip configured; nothing is fetched from the network)'
    if (config.pyodidePreimport.length > 0) what += `; imported into the image: ${config.pyodidePreimport.join(', ')}`
    if (config.pyodideWarmup !== '') what += '; a warm-up snippet run into the image'
    return what
  }

  /** A sandbox (one isolate in the host process), not started. */
  createSandbox(id: string): Sandbox {
    return new RemotePyodideSandbox(id, async () => await this.host(), {
      startTimeoutMs: 120_000,
      closeTimeoutMs: 5000
    })
  }

  #ceilingText(): string {
    const mb = Math.round(this.#limits.memoryBytes / 1024 / 1024)
    const wasm = `each wasm memory ≤ ${this.#limits.wasmMaxPages / 16} MiB (--wasm-max-mem-pages=${this.#limits.wasmMaxPages}), the host's own heap ≤ ${HOST_HEAP_MB} MiB`
    if (this.#ceiling === 'cgroup') return `${wasm}, the whole host ≤ ${mb} MiB (its cgroup)`
    if (this.#ceiling === 'none') return `${wasm}; no cgroup on this machine, so no ceiling on the whole host`
    return `${wasm}, the whole host ≤ ${mb} MiB where the machine offers a memory cgroup`
  }

  /** The sandboxes' Python and what it can import, as the live host says at its start (pyodide-manifest.ts). */
  manifest(): SandboxManifest | undefined {
    const info = this.#live?.info
    if (info?.manifest === undefined) return undefined
    const { os, python, packages } = info.manifest
    return {
      image: 'pyodide',
      build: `pyodide ${info.pyodide} (npm)`,
      os,
      python,
      executor: 'pyodide_harness.py',
      packages
    }
  }

  /** Pyodide's Python, with what its sandboxes can import. */
  environment(): RuntimeEnvironment | undefined {
    const manifest = this.manifest()
    if (manifest === undefined) return undefined
    return {
      runtime: `Pyodide ${this.#live?.info?.pyodide ?? '?'} (CPython on WebAssembly)`,
      version: manifest.python,
      packages: manifest.packages
    }
  }

  /** What this driver protects against. */
  describe(): IsolationReport {
    return {
      driver: 'pyodide',
      boundary:
        'Pyodide (CPython on WebAssembly) in a bare V8 isolate (isolated-vm), in a host process that is a child of the runner',
      properties: [
        'no Node API in the sandbox: no process, require, sockets, subprocess or host files; import js sees only the isolate',
        'no state shared between jobs: the wasm memory is restored to a baseline image after each job',
        'timeout by interrupt, then by isolate termination; memory_mb caps wasm memory growth (MemoryError)',
        'a process boundary between the sandboxes and the runner: a crash of the host (a V8 or wasm fault) answers its jobs in flight infra_error and a new host replaces it; the runner lives on',
        `host process limits: ${this.#ceilingText()}`,
        "not a privilege boundary: the host runs as the runner's user without namespaces or seccomp, so a V8 or wasm runtime bug exploited by the code gets what that user has",
        `packages: ${this.packages()}`
      ]
    }
  }

  /** Stops the host process (it disposes its isolates and exits; killed after 5 s). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true
    const starting = this.#starting
    await this.#live?.close()
    if (starting !== undefined)
      await starting.then(
        async (h) => {
          await h.close()
        },
        () => {}
      )
    await Promise.all([...this.#removing])
    this.#cgroups?.close()
  }
}
