/**
 * A package-lock.json for a project whose dependencies are packed tarballs (`npm run pack`),
 * with every third-party package taken from the repository's own lock: the same versions,
 * resolved URLs and integrity, so `npm ci --offline` installs it from npm's cache, which the
 * repository's `npm ci` filled. Only the packages the tarballs need (and what those need) are
 * locked, each where the repository's tree has it.
 */

/** One entry of a lockfile's `packages`. */
type LockEntry = Record<string, unknown> & {
  version?: string
  link?: boolean
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

/** A packed package: its manifest and how the project names it (`file:tarballs/x.tgz`). */
export interface PackedPackage {
  manifest: LockEntry & { name: string; version: string; main?: string; types?: string; bin?: Record<string, string> }
  spec: string
}

/** Where Node would find `name` from the package at lock path `from` ('' is the project). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let base = from
  for (;;) {
    const candidate = base === '' ? `node_modules/${name}` : `${base}/node_modules/${name}`
    if (packages[candidate] !== undefined) return candidate
    if (base === '') return undefined
    const i = base.lastIndexOf('/node_modules/')
    base = i === -1 ? '' : base.slice(0, i)
  }
}

/** The lockfile (v3) of a project named `name` depending on `packed`, from the repository's `repoLock`. */
export function offlineLock(
  repoLock: { packages: Record<string, LockEntry> },
  name: string,
  packed: PackedPackage[]
): object {
  const source = repoLock.packages
  const packages: Record<string, LockEntry> = {
    '': { name, dependencies: Object.fromEntries(packed.map((p) => [p.manifest.name, p.spec])) }
  }
  const queue: string[] = []
  /** Locks the dependencies of the entry at `path` that are not locked yet. */
  const follow = (path: string, entry: LockEntry): void => {
    const optional = new Set([
      ...Object.keys(entry.optionalDependencies ?? {}),
      ...Object.entries(entry.peerDependenciesMeta ?? {})
        .filter(([, m]) => m.optional === true)
        .map(([n]) => n)
    ])
    for (const dep of Object.keys({
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...entry.peerDependencies
    })) {
      if (dep.startsWith('@sandfleet/') && packed.some((p) => p.manifest.name === dep)) continue
      const at = resolveIn(source, path, dep)
      if (at === undefined) {
        if (optional.has(dep)) continue
        throw new Error(`offlineLock: ${dep} (needed by ${path === '' ? name : path}) is not in the repository's lock`)
      }
      if (source[at]?.link === true)
        throw new Error(`offlineLock: ${dep} is a workspace of the repository, not a packed package`)
      if (packages[at] === undefined) {
        const { dev, devOptional, ...kept } = source[at] as LockEntry & { dev?: boolean; devOptional?: boolean }
        packages[at] = kept
        queue.push(at)
      }
    }
  }
  for (const { manifest, spec } of packed) {
    const {
      name: pkgName,
      version,
      dependencies,
      optionalDependencies,
      peerDependencies,
      bin,
      engines,
      license
    } = manifest
    const entry: LockEntry = {
      version,
      resolved: spec,
      license,
      dependencies,
      optionalDependencies,
      peerDependencies,
      bin,
      engines
    }
    packages[`node_modules/${pkgName}`] = JSON.parse(JSON.stringify(entry)) as LockEntry
    follow('', entry)
  }
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) follow(path, packages[path] as LockEntry)
  return { name, version: '0.0.0', lockfileVersion: 3, requires: true, packages }
}
