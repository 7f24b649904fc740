// The `sandfleet` command as a Node package (@sandfleet/cli): esbuild bundles the CLI and every
// workspace package it uses (runner, gateway, client, trainer, protocol, metrics) into dist/;
// third-party packages stay imports, declared as the package's dependencies.
//
// The sources find files beside themselves through `import.meta.url` (executor.py, the isolates'
// harnesses, the CLI's package.json). In dist/ each source module's `import.meta.url` becomes its
// place in a mirror of the repository (dist/services/runner/src/…/x.ts, a path that need not
// exist), and every file that is not TypeScript in the bundled sources (and the sandbox image's
// Python) is copied to the same place in that mirror, so the same relative URLs find them.
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, relative, sep } from 'node:path'
import { cliBuildOptions } from '../../bin/cli-bundle.mjs'

/** The sandbox's Python (executor.py, session_host.py, manifest.py): the process backend runs it from here. */
const PYTHON_DIR = 'sandbox-images/python'
/** Its programs, each one file built from the package beside them (the package itself stays behind). */
const PYTHON_PROGRAMS = ['executor.py', 'session_host.py', 'manifest.py']
/** Third-party packages the CLI works without (a native build that may fail): optional dependencies. */
const OPTIONAL = new Set(['isolated-vm'])

const posix = (path) => path.split(sep).join('/')

/** An esbuild plugin: each source module's `import.meta.url` names its place in dist/'s mirror of the repository. */
function mirroredUrls(root) {
  return {
    name: 'mirrored-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => ({
        contents: readFileSync(args.path, 'utf8').replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(posix(relative(root, args.path)))}, import.meta.url).href`
        ),
        loader: 'ts'
      }))
    }
  }
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/** The lowest version a range allows, as numbers (`^7.16.0` → [7, 16, 0]), to pick the strictest of two. */
const floorOf = (range) => (/(\d+)\.(\d+)\.(\d+)/.exec(range) ?? [0, 0, 0, 0]).slice(1).map(Number)
const newer = (a, b) => {
  const x = floorOf(a)
  const y = floorOf(b)
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i] ? a : b
  return a
}

/** Copies each file of `from` that `keep` accepts (not in tests) to the same relative place under `to`. */
function copyAssets(from, to, keep = (name) => !name.endsWith('.ts')) {
  for (const e of readdirSync(from, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'test' || e.name === '__pycache__' || e.name.startsWith('.')) continue
    if (e.isDirectory()) copyAssets(join(from, e.name), join(to, e.name), keep)
    else if (keep(e.name)) {
      mkdirSync(to, { recursive: true })
      cpSync(join(from, e.name), join(to, e.name))
    }
  }
}

/**
 * Bundles the CLI into `work/cli/` (dist/, bin/sandfleet.mjs, package.json, README) and returns
 * that folder. `commit` is the commit the bundle was built from (`sandfleet_build_info`).
 */
export async function stageCli(root, work, common, commit) {
  const { build } = await import('esbuild')
  const stage = join(work, 'cli')
  const dist = join(stage, 'dist')
  rmSync(stage, { recursive: true, force: true })
  const result = await build({
    ...cliBuildOptions(root, dist, mirroredUrls(root)),
    absWorkingDir: root,
    metafile: true
  })
  // The workspaces bundled, read from the inputs' paths (cli/src/…, services/runner/src/…).
  const workspaces = new Set()
  for (const input of Object.keys(result.metafile.inputs)) {
    const m = /^((?:packages|services)\/[^/]+|cli)\/src\//.exec(input)
    if (m !== null) workspaces.add(m[1])
  }
  const declared = {}
  for (const ws of workspaces) {
    const manifest = JSON.parse(readFileSync(join(root, ws, 'package.json'), 'utf8'))
    for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
      if (!name.startsWith('@sandfleet/'))
        declared[name] = declared[name] === undefined ? range : newer(declared[name], range)
    }
    copyAssets(join(root, ws, 'src'), join(dist, ws, 'src'))
    mkdirSync(join(dist, ws), { recursive: true })
    writeFileSync(
      join(dist, ws, 'package.json'),
      JSON.stringify({ name: manifest.name, version: manifest.version }) + '\n'
    )
  }
  copyAssets(join(root, PYTHON_DIR), join(dist, PYTHON_DIR), (name) => PYTHON_PROGRAMS.includes(name))
  // Every package the bundle imports must be one a bundled workspace declares.
  const builtins = new Set(builtinModules)
  for (const output of Object.values(result.metafile.outputs)) {
    for (const { path, external } of output.imports) {
      if (!external || path.startsWith('node:') || builtins.has(path)) continue
      if (declared[packageOf(path)] === undefined)
        throw new Error(`pack: the CLI's bundle imports ${path}, which no bundled workspace declares as a dependency`)
    }
  }
  const names = Object.keys(declared).sort()
  const cli = JSON.parse(readFileSync(join(root, 'cli/package.json'), 'utf8'))
  const manifest = {
    name: cli.name,
    version: cli.version,
    description: cli.description,
    type: 'module',
    license: cli.license,
    ...common,
    bin: { sandfleet: 'bin/sandfleet.mjs' },
    files: ['bin', 'dist'],
    dependencies: Object.fromEntries(names.filter((n) => !OPTIONAL.has(n)).map((n) => [n, declared[n]])),
    optionalDependencies: Object.fromEntries(names.filter((n) => OPTIONAL.has(n)).map((n) => [n, declared[n]]))
  }
  writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n')
  const bin = readFileSync(new URL('./cli-bin.mjs', import.meta.url), 'utf8').replace('__SANDFLEET_COMMIT__', commit)
  mkdirSync(join(stage, 'bin'))
  writeFileSync(join(stage, 'bin/sandfleet.mjs'), bin, { mode: 0o755 })
  cpSync(join(root, 'cli/README.md'), join(stage, 'README.md'))
  return stage
}
