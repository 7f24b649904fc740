// The CLI as an ES module bundle (plus a chunk for each thing it imports on demand), made by
// esbuild from the TypeScript sources into .cache/cli/KEY/, where KEY digests every source's
// path, size and modification time: an edit makes a new key, so a bundle found is never stale.
// Plain Node loads it faster than tsx's loader thread takes over the ~300 modules of `sandfleet
// serve` (each one a round trip to that thread), at every start-up (benchmarks/RESULTS.md,
// "Figures that were in code comments").
//
// What the bundle keeps from the sources: third-party packages stay external (node_modules,
// untouched); each module's `import.meta.url` is its own source file's URL, so the files the
// code finds beside itself (executor.py, the isolates' harnesses, the pyodide host's entry) are
// found where they are. A build is never changed or removed while it may be in use: it is made
// aside and renamed into place, and only builds beyond the newest few are pruned. Any failure
// returns undefined, and the caller runs the sources with tsx.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** Where the TypeScript of the CLI and of the workspace packages it bundles lives. */
const SOURCE_DIRS = ['cli/src', 'packages', 'services']
/**
 * The bundle's entry points (output name → source): the CLI, and the pyodide backend's host
 * process, which the runner starts as a separate Node process. scripts/pack.mjs builds the same.
 */
export const CLI_ENTRY_POINTS = Object.freeze({
  main: 'cli/src/main.ts',
  'pyodide-host': 'services/runner/src/backends/pyodide/pyodide-host-main.ts'
})
/** Builds kept besides the current one (a running server may still import its lazy chunks). */
const KEEP = 5

/** A digest of the sources (.ts files and the workspaces' package.json): path, size, mtime. */
export function sourceKey(root = ROOT) {
  const lines = []
  const walk = (dir) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name === 'test' || e.name.startsWith('.')) continue
      const path = join(dir, e.name)
      if (e.isDirectory()) walk(path)
      else if (e.name.endsWith('.ts') || e.name === 'package.json') {
        const s = statSync(path)
        lines.push(`${path} ${s.size} ${s.mtimeMs}`)
      }
    }
  }
  for (const dir of SOURCE_DIRS) walk(join(root, dir))
  return createHash('sha256').update(lines.sort().join('\n')).digest('hex').slice(0, 16)
}

/** An esbuild plugin: `import.meta.url` in each source module becomes that file's URL. */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href)
      ),
      loader: 'ts'
    }))
  }
}

/** Every bare import but the workspace's own (`@sandfleet/…`) stays a runtime import. */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith('@sandfleet/') ? undefined : { external: true }))
  }
}

/**
 * esbuild's options for the CLI's entry points bundled into `outdir`: ESM for Node 20, split,
 * source maps; the workspace's own packages bundled, every other package left an import.
 * `urls` is the plugin that gives each module its `import.meta.url`.
 */
export function cliBuildOptions(root, outdir, urls) {
  return {
    entryPoints: Object.fromEntries(
      Object.entries(CLI_ENTRY_POINTS).map(([name, source]) => [name, join(root, source)])
    ),
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'silent',
    plugins: [urls, externalPackages]
  }
}

/**
 * Bundles `cli/src/main.ts` into `dir` (made aside, then renamed into place), with the pyodide
 * host process's entry beside it (`pyodide-host.js`).
 */
export async function buildCliBundle(dir, root = ROOT) {
  const { build } = await import('esbuild')
  const tmp = `${dir}.tmp-${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  await build(cliBuildOptions(root, tmp, sourceUrls))
  writeFileSync(join(tmp, 'package.json'), '{"type":"module"}\n')
  try {
    renameSync(tmp, dir)
  } catch (err) {
    // Another start-up put the same build in place first.
    rmSync(tmp, { recursive: true, force: true })
    if (!existsSync(join(dir, 'main.js'))) throw err
  }
}

/** Removes all but the newest `keep` builds in `cacheDir`, and builds abandoned over 10 min ago. */
function prune(cacheDir, keep) {
  const entries = readdirSync(cacheDir).map((name) => ({ name, mtimeMs: statSync(join(cacheDir, name)).mtimeMs }))
  const abandoned = entries.filter((e) => e.name.includes('.tmp-') && e.mtimeMs < Date.now() - 600_000)
  const builds = entries.filter((e) => !e.name.includes('.tmp-')).sort((a, b) => b.mtimeMs - a.mtimeMs)
  for (const { name } of [...abandoned, ...builds.slice(keep)])
    rmSync(join(cacheDir, name), { recursive: true, force: true })
}

/**
 * The URL of the bundle of the current sources (built now when there is none), or undefined
 * when it cannot be had (esbuild missing, a build error).
 */
export async function cliBundle(cacheDir = join(ROOT, '.cache/cli'), root = ROOT) {
  try {
    const dir = join(cacheDir, sourceKey(root))
    if (!existsSync(join(dir, 'main.js'))) {
      mkdirSync(cacheDir, { recursive: true })
      await buildCliBundle(dir, root)
      prune(cacheDir, KEEP + 1)
    }
    return pathToFileURL(join(dir, 'main.js')).href
  } catch {
    return undefined
  }
}
