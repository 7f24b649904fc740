/**
 * docs/ARCHITECTURE.md held against the code. Its floors ("The floors"): each table there lists
 * a service's files and folders floor by floor, and a file imports only files of its own floor
 * or a lower one; this reads the tables and checks every import of the services' sources
 * (type-only and dynamic imports count) against them. And every path the page names from the
 * repository's root exists, and so does every file it names by a path's end (`pipeline/quotas.ts`).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { importGraph, type ImportGraph } from './helpers/import-graph.ts'

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
