/**
 * What every pyodide sandbox of a driver shares, prepared once: Pyodide's glue (patched), the
 * wasm module compiled on the host, the stdlib zip, the lock file, the in-isolate sources and a
 * memory snapshot of a booted interpreter (made once, cached on disk in a directory only this
 * user can write, keyed by everything that went into it; the cache keeps the snapshots used last).
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type IvmModule from 'isolated-vm'

/** The isolated-vm module. */
export type Ivm = typeof IvmModule

/**
 * Snapshots the cache keeps (~20 MB each): one a configuration, and a configuration's key
 * changes with its packages zip, pre-imports and warm-up, and with every Pyodide or shim change.
 */
export const SNAPSHOTS_KEPT = 4

/** Heap limit of a pyodide isolate's JavaScript side (wasm memory is not counted by it). */
export const PYODIDE_ISOLATE_HEAP_MB = 512

/**
 * Most bytes a job's files may grow by in all (pyodide-job.js: past it, `ENOSPC`, as a full tmpfs
 * gives). The in-memory file system lives in the isolate's heap, beside the memory image's baseline
 * copy and Pyodide's own objects: a quarter of the heap leaves room for those and for a file's
 * copy while it grows.
 */
export const PYODIDE_JOB_FILES_MB = PYODIDE_ISOLATE_HEAP_MB / 4

/**
 * Stdlib modules imported before the snapshot is taken. A job's own imports are undone with its
 * memory, so a module not in the image is imported again by every job that uses it (fractions
 * alone takes ~1 s here); these are in the image, free for every job.
 */
export const PREIMPORT: readonly string[] = Object.freeze([
  'array',
  'base64',
  'bisect',
  'builtins',
  'cmath',
  'codecs',
  'collections',
  'copy',
  'dataclasses',
  'datetime',
  'decimal',
  'enum',
  'fractions',
  'functools',
  'hashlib',
  'heapq',
  'io',
  'itertools',
  'json',
  'linecache',
  'math',
  'numbers',
  'operator',
  'os',
  'pprint',
  'random',
  're',
  'statistics',
  'string',
  'struct',
  'sys',
  'textwrap',
  'time',
  'traceback',
  'types',
  'typing'
])

function patch(source: string, from: string, to: string): string {
  if (!source.includes(from)) throw new Error(`pyodide glue: "${from}" not found (was the pyodide version changed?)`)
  return source.replace(from, to)
}

function own(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8')
}

/** Where a pyodide sandbox's packages come from. */
export interface PyodidePackageOptions {
  /** A zip of pure-Python packages put on sys.path ('' for none). */
  packagesZip?: string
  /** Modules imported into the memory image. */
  preimport?: readonly string[]
  /** Python run into the memory image after the imports (warms lazy imports and caches). */
  warmup?: string
}

/** Path of the operator's package zip inside each isolate's file system. */
export const PACKAGES_PATH = '/lib/sandfleet/packages.zip'

/** Pyodide's files and the sandfleet sources evaluated in each isolate. */
export class PyodideAssets {
  /** The pyodide package's version. */
  readonly version: string
  /** Shell-mode glue with the random source and memory growth patched. */
  readonly glue: string
  /** pyodide.js (defines loadPyodide). */
  readonly loader: string
  /** text-codec.js and pyodide-shims.js. */
  readonly shims: string
  /** pyodide-job.js. */
  readonly job: string
  /** pyodide_harness.py. */
  readonly harness: string
  readonly lock: string
  readonly stdlib: ArrayBuffer
  /** The compiled pyodide.asm.wasm (a WebAssembly.Module; the lib of this tsconfig does not type it). */
  readonly wasm: object
  /** The operator's package zip, written into every isolate's file system (undefined: none). */
  readonly packages: Uint8Array | undefined
  /** Modules imported into the snapshot besides the stdlib ones. */
  readonly preimport: readonly string[]
  /** Python run into the snapshot after the imports. */
  readonly warmup: string
  /** A memory snapshot of a booted interpreter (after {@link prepareSnapshot}). */
  snapshot: ArrayBuffer | undefined
  /** Where the snapshot came from: `cache <path>` or `made in <ms> ms`. */
  snapshotSource = ''
  private readonly key: string

  private constructor(
    readonly ivm: Ivm,
    dir: string,
    options: PyodidePackageOptions
  ) {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }
    this.version = pkg.version
    let glue = readFileSync(join(dir, 'pyodide.asm.js'), 'utf8')
    // Shell mode draws randomness with os.system: use the shimmed crypto (host entropy) instead.
    glue = patch(glue, 'var initRandomFill=()=>{', 'var initRandomFill=()=>{return view=>crypto.getRandomValues(view);')
    // A per-job cap on wasm memory growth: a refused growth is a clean MemoryError in Python.
    glue = patch(
      glue,
      'var growMemory=size=>{',
      'var growMemory=size=>{var __l=Module.__sf_maxHeap&&Module.__sf_maxHeap();if(__l&&size>__l)return 0;'
    )
    this.glue = glue
    this.loader = readFileSync(join(dir, 'pyodide.js'), 'utf8')
    this.shims = own('../../kits/isolate/text-codec.js') + ';\n' + own('pyodide-shims.js')
    this.job = own('pyodide-job.js')
    this.harness = own('pyodide_harness.py')
    this.lock = readFileSync(join(dir, 'pyodide-lock.json'), 'utf8')
    const zip = readFileSync(join(dir, 'python_stdlib.zip'))
    this.stdlib = zip.buffer.slice(zip.byteOffset, zip.byteOffset + zip.byteLength) as ArrayBuffer
    const wasmBytes = readFileSync(join(dir, 'pyodide.asm.wasm'))
    const wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } }).WebAssembly
    this.wasm = new wasm.Module(wasmBytes)
    if (options.packagesZip !== undefined && options.packagesZip !== '') {
      try {
        this.packages = new Uint8Array(readFileSync(options.packagesZip))
      } catch (err) {
        throw new Error(`pyodidePackages: cannot read ${options.packagesZip} (${(err as Error).message})`)
      }
    }
    this.preimport = Object.freeze([...(options.preimport ?? [])])
    for (const name of this.preimport)
      if (!/^[A-Za-z_][\w.]*$/.test(name)) throw new Error(`pyodidePreimport: "${name}" is not a module name`)
    this.warmup = options.warmup ?? ''
    this.key = createHash('sha256')
      .update(this.packages ?? '')
      .update(this.preimport.join(','))
      .update(this.warmup)
      .update(this.version)
      .update(this.glue)
      .update(this.loader)
      .update(this.shims)
      .update(PREIMPORT.join(','))
      .update(wasmBytes)
      .update(zip)
      .digest('hex')
      .slice(0, 16)
  }

  /** Reads and compiles Pyodide from its npm package (fails with what is missing). */
  static load(ivm: Ivm, options: PyodidePackageOptions = {}): PyodideAssets {
    const require = createRequire(import.meta.url)
    let dir: string
    try {
      dir = dirname(require.resolve('pyodide/package.json'))
    } catch {
      throw new Error('the pyodide npm package is not installed; run npm install')
    }
    return new PyodideAssets(ivm, dir, options)
  }

  /** Makes a fresh isolate with the shims, glue and loader evaluated (not booted). */
  async isolate(): Promise<{ isolate: IvmModule.Isolate; context: IvmModule.Context }> {
    const ivm = this.ivm
    const isolate = new ivm.Isolate({ memoryLimit: PYODIDE_ISOLATE_HEAP_MB })
    try {
      const context = await isolate.createContext()
      const g = context.global
      await g.set('globalThis', g.derefInto())
      await g.set(
        '__sf_random',
        new ivm.Callback((n: number) =>
          new ivm.ExternalCopy(randomBytes(Math.min(Math.max(0, n | 0), 1 << 20)).buffer).copyInto({ release: true })
        )
      )
      await g.set('__sf_lock', this.lock)
      await g.set('__sf_stdlib', new ivm.ExternalCopy(this.stdlib).copyInto({ release: true }))
      await g.set('__sf_wasm', new ivm.ExternalCopy(this.wasm).copyInto({ release: true }))
      if (this.packages !== undefined)
        await g.set('__sf_packages', new ivm.ExternalCopy(this.packages).copyInto({ release: true }))
      for (const [source, filename] of [
        [this.shims, 'pyodide-shims.js'],
        [this.glue, 'pyodide.asm.js'],
        [this.loader, 'pyodide.js']
      ]) {
        const script = await isolate.compileScript(source, { filename })
        await script.run(context)
        script.release()
      }
      return { isolate, context }
    } catch (err) {
      if (!isolate.isDisposed) isolate.dispose()
      throw err
    }
  }

  /** The snapshot from the cache, or made now (a cold boot, a few seconds) and cached. */
  async prepareSnapshot(cacheDir = join(tmpdir(), `sandfleet-pyodide-${process.getuid?.() ?? 'user'}`)): Promise<void> {
    if (this.snapshot !== undefined) return
    const file = join(cacheDir, `snapshot-${this.version}-${this.key}.bin`)
    try {
      const dir = statSync(cacheDir)
      if (
        dir.isDirectory() &&
        (dir.mode & 0o022) === 0 &&
        (process.getuid === undefined || dir.uid === process.getuid())
      ) {
        const bytes = readFileSync(file)
        this.snapshot = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
        this.snapshotSource = `cache ${file}`
        try {
          const now = new Date()
          utimesSync(file, now, now)
        } catch {} // used last: kept by pruneSnapshots
        return
      }
    } catch {}
    const started = performance.now()
    const { isolate, context } = await this.isolate()
    try {
      const extra = this.preimport.length > 0 ? `\nimport ${this.preimport.join(', ')}` : ''
      await context.global.set(
        '__sf_preimport',
        `import ${PREIMPORT.join(', ')}${this.packages !== undefined ? `\nsys.path.insert(0, ${JSON.stringify(PACKAGES_PATH)})` : ''}${extra}`
      )
      await context.global.set('__sf_warmup', this.warmup)
      const snapshot = (await context.eval(
        '(async () => { const py = await loadPyodide({ indexURL: "/p/", _makeSnapshot: true }); __sf_mountPackages(py); py.runPython(__sf_preimport); if (__sf_warmup !== "") py.runPython(__sf_warmup, { globals: py.toPy({}) }); return py.makeMemorySnapshot() })()',
        { promise: true, copy: true, timeout: 600_000 }
      )) as Uint8Array | ArrayBuffer
      const bytes = snapshot instanceof ArrayBuffer ? new Uint8Array(snapshot) : snapshot
      this.snapshot = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
      this.snapshotSource = `made in ${Math.round(performance.now() - started)} ms`
    } catch (err) {
      throw new Error(`Pyodide did not boot in an isolate: ${(err as Error).message}`, { cause: err })
    } finally {
      isolate.dispose()
    }
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
      const tmp = `${file}.${process.pid}.tmp`
      writeFileSync(tmp, new Uint8Array(this.snapshot), { mode: 0o600 })
      renameSync(tmp, file)
      this.snapshotSource += `, cached at ${file}`
      pruneSnapshots(cacheDir)
    } catch {}
  }
}

/**
 * Removes all but the `keep` snapshots of `cacheDir` used last (by modification time, which a
 * cache hit renews), and temporary files of writes that died over an hour ago. A host that
 * loaded a snapshot holds it in memory: removing its file only makes the next start of that
 * configuration boot cold once.
 */
export function pruneSnapshots(cacheDir: string, keep = SNAPSHOTS_KEPT): void {
  const now = Date.now()
  const snapshots: Array<{ path: string; mtimeMs: number }> = []
  for (const name of readdirSync(cacheDir)) {
    if (!name.startsWith('snapshot-')) continue
    const path = join(cacheDir, name)
    try {
      const { mtimeMs } = statSync(path)
      if (name.endsWith('.bin')) snapshots.push({ path, mtimeMs })
      else if (name.endsWith('.tmp') && now - mtimeMs > 3_600_000) rmSync(path, { force: true })
    } catch {}
  }
  snapshots.sort((a, b) => b.mtimeMs - a.mtimeMs)
  for (const { path } of snapshots.slice(keep)) rmSync(path, { force: true })
}
