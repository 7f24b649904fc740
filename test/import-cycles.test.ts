import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { importCycles, importGraph, importSpecifiers, pythonImportGraph } from './helpers/import-graph.ts'

const root = join(import.meta.dirname, '..')

/** A workspace of `files` (path → text) in a fresh directory, with one package `@sandfleet/p` in p/. */
function fixture(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sandfleet-imports-'))
  const all: Record<string, string> = {
    'package.json': JSON.stringify({ workspaces: ['p'] }),
    'p/package.json': JSON.stringify({ name: '@sandfleet/p', exports: { '.': './src/index.ts' } }),
    ...files
  }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

test('nothing but tests imports from test/: services, packages, the CLI and the benchmarks stand without it', () => {
  const graph = importGraph(root, ['packages', 'services', 'cli/src', 'benchmarks'])
  const tests = join(root, 'test') + '/'
  const found = [...graph]
    .filter(([file]) => !file.endsWith('.test.ts') && !file.includes('/test/'))
    .flatMap(([file, edges]) =>
      [...edges].filter((to) => to.startsWith(tests)).map((to) => `${relative(root, file)} -> ${relative(root, to)}`)
    )
  assert.ok(graph.size > 200, `the walk found the sources (${graph.size} files)`)
  assert.deepEqual(found, [])
})

test('the services and packages have no import cycles (type-only and dynamic imports count)', () => {
  const graph = importGraph(root, ['packages', 'services', 'cli/src'])
  assert.ok(graph.size > 150, `the walk found the sources (${graph.size} files)`)
  assert.deepEqual(
    importCycles(graph, root).map((cycle) => cycle.join(' -> ')),
    []
  )
})

test("the Python packages (the client, the sandbox's) have no import cycles (deferred and TYPE_CHECKING imports count)", () => {
  for (const [dir, name] of [
    ['clients/python/sandfleet', 'sandfleet'],
    ['sandbox-images/python/sandfleet_sandbox', 'sandfleet_sandbox']
  ]) {
    const graph = pythonImportGraph(join(root, dir), name)
    assert.ok(
      [...graph.values()].some((edges) => edges.size > 0),
      `the walk found ${dir}'s imports`
    )
    assert.deepEqual(
      importCycles(graph, root).map((cycle) => cycle.join(' -> ')),
      [],
      dir
    )
  }
})

test('import-graph: a Python import in a function or under TYPE_CHECKING is an edge; one in a docstring is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sandfleet-py-imports-'))
  try {
    writeFileSync(join(dir, '__init__.py'), 'from .a import A\n')
    writeFileSync(
      join(dir, 'a.py'),
      '"""from .c import nothing"""\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n'
    )
    writeFileSync(join(dir, 'b.py'), 'def f():\n    from pkg.a import A\n    return A\n')
    writeFileSync(join(dir, 'c.py'), 'from . import (a,\n  b)\n')
    const cycles = importCycles(pythonImportGraph(dir, 'pkg'), dir)
    assert.deepEqual(cycles, [['a.py', 'b.py', 'a.py']])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('import-graph: a cycle through a type import, a dynamic import and a package export is found', () => {
  const dir = fixture({
    'p/src/index.ts': "export { a } from './a.ts'\n",
    'p/src/a.ts': "import type { B } from './b.ts'\nexport const a = 1\n",
    'p/src/b.ts': "export type B = number\nexport const load = async () => await import('../../q/c.ts')\n",
    'q/c.ts': "import { a } from '@sandfleet/p'\nexport const c = a\n",
    'q/leaf.ts': "import { c } from './c.ts'\nimport 'node:fs'\nexport const leaf = c\n"
  })
  try {
    const cycles = importCycles(importGraph(dir, ['p', 'q']), dir)
    assert.deepEqual(cycles, [['p/src/a.ts', 'p/src/b.ts', 'q/c.ts', 'p/src/index.ts', 'p/src/a.ts']])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('import-graph: imports in comments are not edges, and an acyclic tree has no cycles', () => {
  const dir = fixture({
    'p/src/index.ts':
      "/** e.g. `import { x } from './x.ts'` */\n// import './x.ts'\nexport const url = 'http://example.invalid//x'\n",
    'p/src/x.ts': "import { url } from './index.ts'\nexport const x = url\n"
  })
  try {
    assert.deepEqual(importSpecifiers("/* import './a.ts' */ import b from './b.ts' // import('./c.ts')"), ['./b.ts'])
    assert.deepEqual(importCycles(importGraph(dir, ['p']), dir), [])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
