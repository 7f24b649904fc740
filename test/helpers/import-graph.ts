/**
 * A static import graph of the workspace's TypeScript, and the cycles in it.
 *
 * Every `import … from`, `export … from`, side-effect `import '…'` and `import('…')` of a `.ts`
 * file is an edge, type-only imports included (a cycle of types is still two modules that cannot
 * be understood apart). Relative specifiers resolve against the file; `@sandfleet/…` specifiers
 * through the workspace package's `exports`; anything else (node:, third-party) is not followed.
 * Comments are removed first, so an example in a doc comment is not an edge.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/** Absolute path of each file → the absolute paths of the workspace files it imports. */
export type ImportGraph = Map<string, Set<string>>

/** `source` with its comments blanked out; strings and template literals kept as they are. */
export function stripComments(source: string): string {
  let out = ''
  let i = 0
  while (i < source.length) {
    const c = source[i]
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2)
      i = end === -1 ? source.length : end + 2
      out += ' '
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1
      out += source.slice(i, j + 1)
      i = j + 1
    } else {
      out += c
      i++
    }
  }
  return out
}

const SPECIFIERS = [
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /^\s*import\s*['"]([^'"]+)['"]/gm,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g
]

/** The module specifiers `source` imports, in order of appearance per kind. */
export function importSpecifiers(source: string): string[] {
  const text = stripComments(source)
  return SPECIFIERS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]))
}

/** Workspace packages by name: their directory and `exports` map (`.` or subpaths → file). */
function workspacePackages(root: string): Map<string, { dir: string; exports: Record<string, string> }> {
  const packages = new Map<string, { dir: string; exports: Record<string, string> }>()
  const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] }
  for (const ws of rootManifest.workspaces ?? []) {
    const manifestPath = join(root, ws, 'package.json')
    if (!existsSync(manifestPath)) continue
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { name: string; exports?: unknown }
    const exports: Record<string, string> = {}
    const add = (key: string, target: unknown): void => {
      if (typeof target === 'string') exports[key] = target
      else if (target !== null && typeof target === 'object') {
        // Conditions: the first that names TypeScript source (a `source`, `types` or `import` one).
        const conditions = Object.values(target as Record<string, unknown>)
        add(
          key,
          conditions.find((t) => typeof t === 'string' && t.endsWith('.ts') && !t.endsWith('.d.ts')) ??
            conditions.find((t) => typeof t === 'object')
        )
      }
    }
    if (typeof manifest.exports === 'string') add('.', manifest.exports)
    else if (manifest.exports !== null && typeof manifest.exports === 'object') {
      const entries = Object.entries(manifest.exports as Record<string, unknown>)
      if (entries.every(([k]) => k.startsWith('.'))) for (const [k, v] of entries) add(k, v)
      else add('.', manifest.exports)
    }
    packages.set(manifest.name, { dir: join(root, ws), exports })
  }
  return packages
}

/** Every `.ts` file under `dir`, skipping node_modules and dot-directories. */
function tsFiles(dir: string, out: string[] = []): string[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) tsFiles(path, out)
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/**
 * The import graph of every `.ts` file under `roots` (directories relative to `root`, the
 * workspace root holding package.json). Edges to files outside `roots` are kept, so a cycle
 * through them is found only when their own imports are walked too: walk every root a cycle
 * may pass through.
 */
export function importGraph(root: string, roots: readonly string[]): ImportGraph {
  const packages = workspacePackages(root)
  const resolveSpecifier = (from: string, spec: string): string | undefined => {
    if (spec.startsWith('.')) {
      const path = resolve(dirname(from), spec)
      return path.endsWith('.ts') && existsSync(path) ? path : undefined
    }
    const match = /^(@sandfleet\/[^/]+)(\/.*)?$/.exec(spec)
    if (match === null) return undefined
    const pkg = packages.get(match[1])
    const target = pkg?.exports[match[2] === undefined ? '.' : `.${match[2]}`]
    return pkg === undefined || target === undefined || !target.endsWith('.ts') ? undefined : join(pkg.dir, target)
  }
  const graph: ImportGraph = new Map()
  for (const file of roots.flatMap((r) => tsFiles(join(root, r)))) {
    const edges = new Set<string>()
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolveSpecifier(file, spec)
      if (target !== undefined && target !== file) edges.add(target)
    }
    graph.set(file, edges)
  }
  return graph
}

/**
 * The import cycles of `graph`: one per strongly connected component of more than one file (or
 * a file importing itself), each as the files of one closed path through it, starting and ending
 * with the same file, relative to `root`.
 */
export function importCycles(graph: ImportGraph, root = '/'): string[][] {
  // Tarjan's strongly connected components, iterative.
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const components: string[][] = []
  for (const start of graph.keys()) {
    if (index.has(start)) continue
    const work: Array<{ node: string; edges: Iterator<string> }> = []
    const visit = (node: string): void => {
      index.set(node, counter)
      low.set(node, counter)
      counter++
      stack.push(node)
      onStack.add(node)
      work.push({ node, edges: (graph.get(node) ?? new Set<string>()).values() })
    }
    visit(start)
    while (work.length > 0) {
      const top = work[work.length - 1]
      const step = top.edges.next()
      if (!step.done) {
        const next = step.value
        if (!index.has(next)) visit(next)
        else if (onStack.has(next)) low.set(top.node, Math.min(low.get(top.node)!, index.get(next)!))
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work[work.length - 1].node
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!))
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = []
        let member: string
        do {
          member = stack.pop()!
          onStack.delete(member)
          component.push(member)
        } while (member !== top.node)
        if (component.length > 1 || graph.get(top.node)?.has(top.node) === true) components.push(component)
      }
    }
  }
  return components.map((component) => closedPath(graph, new Set(component)).map((f) => relative(root, f)))
}

/** One closed path through the strongly connected `members`, from their first file (sorted) back to it. */
function closedPath(graph: ImportGraph, members: Set<string>): string[] {
  const first = [...members].sort()[0]
  // Breadth-first from `first` inside the component, until an edge leads back to it.
  const previous = new Map<string, string>()
  const queue = [first]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]
    for (const next of graph.get(node) ?? []) {
      if (!members.has(next)) continue
      if (next === first) {
        const path = [node]
        while (path[0] !== first) path.unshift(previous.get(path[0])!)
        return [...path, first]
      }
      if (!previous.has(next)) {
        previous.set(next, node)
        queue.push(next)
      }
    }
  }
  return [first, first]
}

/**
 * The import graph of one Python package (the `.py` files of directory `pkg`, named `name`): an
 * edge for each `from .m import …`, `from . import m`, `from name.m import …` and `import name.m`
 * to another module of the package, wherever it stands (in a function or under TYPE_CHECKING too:
 * such an import is a cycle deferred, not removed).
 */
export function pythonImportGraph(pkg: string, name: string): ImportGraph {
  const moduleFile = (mod: string): string | undefined => {
    const base = join(pkg, ...mod.split('.'))
    return [`${base}.py`, join(base, '__init__.py')].find((p) => mod !== '' && existsSync(p))
  }
  const graph: ImportGraph = new Map()
  for (const file of readdirSync(pkg)
    .filter((f) => f.endsWith('.py'))
    .map((f) => join(pkg, f))) {
    const edges = new Set<string>()
    const source = readFileSync(file, 'utf8')
      .replace(/("""|''')[\s\S]*?\1/g, '')
      .replace(/#.*$/gm, '')
    const add = (mod: string): void => {
      const target = moduleFile(mod)
      if (target !== undefined && target !== file) edges.add(target)
    }
    for (const m of source.matchAll(
      new RegExp(`^\\s*from\\s+(\\.+|${name}\\.?)([\\w.]*)\\s+import\\s+\\(?([\\w\\s,]+)`, 'gm')
    )) {
      if (m[2] !== '') add(m[2])
      else for (const n of m[3].split(',')) add(n.trim().split(/\s+/)[0])
    }
    for (const m of source.matchAll(new RegExp(`^\\s*import\\s+${name}\\.([\\w.]+)`, 'gm'))) add(m[1])
    graph.set(file, edges)
  }
  return graph
}
