/**
 * docs/ARCHITECTURE.md held against the code. Its package table (the rows under `<!-- packages
 * -->`): each workspace's layer and the packages it depends on, which must be what its
 * package.json declares, of a lower layer or its own; and every import of every file of every
 * workspace (sources, tests, examples) must be a package it declares, never another package's
 * files by path. Its floors ("The floors"): each table there lists a service's files and folders
 * floor by floor, and a file imports only files of its own floor or a lower one; this reads the
 * tables and checks every import of the services' sources (type-only and dynamic imports count)
 * against them. And every path the page names from the repository's root exists, and so does
 * every file it names by a path's end (`pipeline/quotas.ts`).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import { importGraph, importSpecifiers, stripComments, type ImportGraph } from './helpers/import-graph.ts'

const root = join(import.meta.dirname, '..')
const SERVICES = ['services/runner/src', 'services/gateway/src']

/**
 * One service's floors: each listed place (a file, or a folder ending in `/`, relative to the service's src) and its
 * floor.
 */
type Floors = Map<string, number>

/**
 * The floors tables of `markdown`, by the folder each is about (`<!-- floors: services/runner/src -->` above a table
 * whose rows are `| N | \`a.ts\` \`b/\` | … |`).
 */
function floorTables(markdown: string): Map<string, Floors> {
  const tables = new Map<string, Floors>()
  for (const m of markdown.matchAll(/<!-- floors: (\S+) -->\n((?:\|.*\n)+)/g)) {
    const floors: Floors = new Map()
    for (const row of m[2].split('\n')) {
      const cells = row.split('|').map((c) => c.trim())
      if (!/^\d+$/.test(cells[1] ?? '')) continue
      for (const [, place] of (cells[2] ?? '').matchAll(/`([^`]+)`/g)) floors.set(place, Number(cells[1]))
    }
    tables.set(m[1], floors)
  }
  return tables
}

/**
 * The floor of `file` (relative to its src): its own row, else its nearest listed folder's; undefined when none lists
 * it.
 */
function floorOf(file: string, floors: Floors): number | undefined {
  if (floors.has(file)) return floors.get(file)
  const parts = file.split('/')
  for (let n = parts.length - 1; n > 0; n--) {
    const folder = parts.slice(0, n).join('/') + '/'
    if (floors.has(folder)) return floors.get(folder)
  }
  return undefined
}

/** The imports inside `dir` that run from a lower floor to a higher one, and the files no row places, as lines. */
function floorProblems(graph: ImportGraph, dir: string, floors: Floors): { backward: string[]; unplaced: string[] } {
  const backward: string[] = []
  const unplaced = new Set<string>()
  const inside = (path: string): string | undefined => (path.startsWith(dir + '/') ? relative(dir, path) : undefined)
  for (const [from, edges] of graph) {
    const f = inside(from)
    if (f === undefined) continue
    const fromFloor = floorOf(f, floors)
    if (fromFloor === undefined) {
      unplaced.add(f)
      continue
    }
    for (const to of edges) {
      const t = inside(to)
      if (t === undefined) continue
      const toFloor = floorOf(t, floors)
      if (toFloor === undefined) unplaced.add(t)
      else if (toFloor > fromFloor) backward.push(`${f} (floor ${fromFloor}) -> ${t} (floor ${toFloor})`)
    }
  }
  return { backward, unplaced: [...unplaced].sort() }
}

/** A row of the package table: a workspace's folder, its layer and the `@sandfleet/…` packages it depends on. */
interface PackageRow {
  dir: string
  layer: number
  dependsOn: string[]
}

/**
 * The rows of the table under `<!-- packages -->` in `markdown` that have a layer (a workspace);
 * `| \`dir\` | layer | job | depends on |`, where "depends on" names packages by their short name
 * (`protocol`), then third-party ones in parentheses, or `—`.
 */
function packageTable(markdown: string): PackageRow[] {
  const m = /<!-- packages -->\n((?:\|.*\n)+)/.exec(markdown)
  if (m === null) return []
  const rows: PackageRow[] = []
  for (const line of m[1].split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim())
    const dir = /^`([^`]+)`$/.exec(cells[1] ?? '')?.[1]
    if (dir === undefined || !/^\d+$/.test(cells[2] ?? '')) continue
    const dependsOn = (cells[cells.length - 2] ?? '')
      .replace(/\([^)]*\)/g, '')
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '' && d !== '—')
    rows.push({ dir, layer: Number(cells[2]), dependsOn })
  }
  return rows
}

interface Manifest {
  name: string
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

const manifestOf = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`, `undici/x` → `undici`). */
const packageOf = (specifier: string): string =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

/** Every script of `dir` (TypeScript, JavaScript), node_modules and dot folders left out. */
function scripts(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) scripts(path, out)
    else if (/\.(?:ts|mts|cts|js|mjs|cjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/** The specifiers `source` imports or requires. */
function specifiersOf(source: string): string[] {
  const required = [...stripComments(source).matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1])
  return [...importSpecifiers(source), ...required]
}

const BUILTINS = new Set(builtinModules)
/** What runs the workspaces' TypeScript sources (the repository's devDependency): a source may register it. */
const SOURCE_LOADER = 'tsx'

/**
 * What the files of workspace `dir` import that it may not: a `@sandfleet/…` package or a
 * third-party one its package.json does not declare (a test's or an example's may also be one of
 * the repository's devDependencies), or another folder's file by a relative path. One line each.
 */
function undeclaredImports(dir: string, rootDev: ReadonlySet<string>): string[] {
  const manifest = manifestOf(dir)
  const runtime = new Set(
    [manifest.dependencies, manifest.optionalDependencies, manifest.peerDependencies].flatMap((d) =>
      Object.keys(d ?? {})
    )
  )
  const forTests = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {}), ...rootDev])
  const home = join(root, dir)
  const problems: string[] = []
  for (const file of scripts(home)) {
    const where = relative(home, file)
    const testing = /(^|\/)(test|examples)\//.test(where) || /\.test\.ts$/.test(where)
    for (const spec of specifiersOf(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('node:') || BUILTINS.has(spec)) continue
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec)
        if (relative(home, target).startsWith('..'))
          problems.push(`${dir}/${where} -> ${relative(root, target)} (by path)`)
        continue
      }
      const name = packageOf(spec)
      if (name === manifest.name || name === SOURCE_LOADER || (testing ? forTests : runtime).has(name)) continue
      problems.push(`${dir}/${where} -> ${name} (not declared)`)
    }
  }
  return problems
}

const packages = packageTable(readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8'))
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest & { workspaces: string[] }

test("docs/ARCHITECTURE.md's package table has a row with a layer for every workspace, and for nothing else", () => {
  assert.deepEqual(packages.map((p) => p.dir).sort(), [...rootManifest.workspaces].sort())
})

test('each workspace depends on the packages its row names, as its package.json declares, each of a lower layer or its own', () => {
  const byShortName = new Map(packages.map((p) => [manifestOf(p.dir).name.replace('@sandfleet/', ''), p]))
  for (const row of packages) {
    const manifest = manifestOf(row.dir)
    const declared = Object.keys(manifest.dependencies ?? {})
      .filter((d) => d.startsWith('@sandfleet/'))
      .map((d) => d.replace('@sandfleet/', ''))
    assert.deepEqual(
      [...row.dependsOn].sort(),
      declared.sort(),
      `${row.dir}: its row's "depends on" and its package.json`
    )
    for (const dep of row.dependsOn) {
      const other = byShortName.get(dep)
      assert.ok(other !== undefined, `${row.dir} depends on ${dep}, a package of the table`)
      assert.ok(other.layer <= row.layer, `${row.dir} (layer ${row.layer}) depends on ${dep} (layer ${other.layer})`)
    }
    const devWorkspaces = Object.keys(manifest.devDependencies ?? {}).filter((d) => d.startsWith('@sandfleet/'))
    assert.deepEqual(devWorkspaces, [], `${row.dir}: its tests use what the package depends on`)
  }
})

test('every import of every workspace (sources, tests, examples) is a package it declares, never a file of another by path', () => {
  const rootDev = new Set(Object.keys(rootManifest.devDependencies ?? {}))
  const problems = packages.flatMap((p) => undeclaredImports(p.dir, rootDev))
  assert.deepEqual(problems, [])
})

test('packageTable and undeclaredImports find what they should', () => {
  const rows = packageTable(
    '<!-- packages -->\n| package | layer | job | depends on |\n| --- | --- | --- | --- |\n' +
      '| `a/p` | 1 | pipes `x\\|y` | — (lib) |\n| `a/q` | 2 | q | p, r (undici) |\n| `a/py` | — | no package | — |\n'
  )
  assert.deepEqual(rows, [
    { dir: 'a/p', layer: 1, dependsOn: [] },
    { dir: 'a/q', layer: 2, dependsOn: ['p', 'r'] }
  ])
  assert.deepEqual(specifiersOf("import a from 'x'\n// import b from 'y'\nconst c = require('z/sub')"), ['x', 'z/sub'])
})

const tables = floorTables(readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8'))

for (const service of SERVICES) {
  test(`${service}: every import runs down the floors of docs/ARCHITECTURE.md, and every file stands on one`, () => {
    const floors = tables.get(service)
    assert.ok(floors !== undefined && floors.size > 3, `docs/ARCHITECTURE.md has a floors table for ${service}`)
    for (const place of floors.keys())
      assert.ok(existsSync(join(root, service, place)), `${service}/${place}, listed on a floor, exists`)
    const graph = importGraph(root, [service])
    assert.ok(graph.size > 20, `the walk found ${service}'s sources (${graph.size} files)`)
    const { backward, unplaced } = floorProblems(graph, join(root, service), floors)
    assert.deepEqual(unplaced, [], 'files no floor holds')
    assert.deepEqual(backward, [], 'imports that run up a floor')
  })
}

test("every path docs/ARCHITECTURE.md names from the repository's root exists", () => {
  const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8')
  const paths = [
    ...new Set(
      [
        ...doc.matchAll(
          /`((?:services|packages|test|sandbox-images|benchmarks|helm|deploy|cli|clients|docs|scripts)\/[^`\s]*)`/g
        )
      ].map((m) => m[1])
    )
  ]
  assert.ok(paths.length > 30, `the scan found the paths (${paths.length})`)
  assert.deepEqual(
    paths.filter((p) => !existsSync(join(root, p))),
    []
  )
})

test("every file docs/ARCHITECTURE.md names by a path's end (`pipeline/quotas.ts`) is a file of the repository", () => {
  const git = (...args: string[]): string[] =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean)
  const files = [...git('ls-files'), ...git('ls-files', '--others', '--exclude-standard')]
  const doc = readFileSync(join(root, 'docs/ARCHITECTURE.md'), 'utf8')
  // a name in backticks ending in a source or config extension; one starting with / is a URL path
  const named = new Set([...doc.matchAll(/`([\w.-][\w./-]*\.(?:ts|py|mjs|js|json|sh|yaml))`/g)].map((m) => m[1]))
  assert.ok(named.size > 50, `the page names files (${named.size})`)
  assert.deepEqual(
    [...named].filter((name) => !files.some((f) => f === name || f.endsWith(`/${name}`))),
    []
  )
})

test('floorProblems: an import up a floor and a file on no floor are found; one down, or within a floor, is not', () => {
  const dir = '/x/src'
  const graph: ImportGraph = new Map([
    [`${dir}/app.ts`, new Set([`${dir}/pool/pool.ts`, '/elsewhere/lib.ts'])],
    [`${dir}/pool/pool.ts`, new Set([`${dir}/pool/queue.ts`, `${dir}/app.ts`])],
    [`${dir}/pool/queue.ts`, new Set([`${dir}/stray.ts`])]
  ])
  const floors = floorTables(
    '<!-- floors: x/src -->\n| floor | files |\n| --- | --- |\n| 2 | `app.ts` |\n| 1 | `pool/` |\n'
  ).get('x/src')
  assert.ok(floors !== undefined)
  assert.deepEqual(floorProblems(graph, dir, floors), {
    backward: ['pool/pool.ts (floor 1) -> app.ts (floor 2)'],
    unplaced: ['stray.ts']
  })
})
