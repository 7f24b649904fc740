/**
 * What `npm install` says on the oldest Node the project supports: every package of the lock
 * that declares `engines.node` admits the root's floor (`engines.node` of package.json), so a
 * fresh install prints no `EBADENGINE`, and the README names that floor.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>
}
/** npm's own range logic (semver, which fastify brings): the same verdict as npm's engine check. */
const semver = createRequire(join(root, 'package.json'))('semver') as {
  minVersion: (range: string) => { version: string } | null
  satisfies: (version: string, range: string) => boolean
}

/**
 * Packages whose manifest asks for a newer Node than the floor, each with the reason it is kept
 * anyway. Empty is the goal: an entry here is an EBADENGINE warning on every fresh install.
 */
const ACCEPTED: Record<string, string> = {
  undici8:
    "an optional dependency of e2b (E2B's SDK, a devDependency for the E2B tests), which it loads only on Node 22.19+; npm leaves it out below"
}

test("every locked package that declares engines.node admits the project's oldest Node", () => {
  const floor = semver.minVersion(manifest.engines.node)?.version
  assert.ok(floor !== undefined, `package.json engines.node ${manifest.engines.node} names a version`)
  const refused: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    if (range === undefined || path === '' || ACCEPTED[name] !== undefined) continue
    if (!semver.satisfies(floor, range)) refused.push(`${name}@${entry.version ?? '?'} wants node ${range}`)
  }
  assert.deepEqual(
    refused,
    [],
    `node ${floor} (package.json) is refused by: pin a release that supports it, or raise the floor everywhere`
  )
})

test('README names the Node floor of package.json', () => {
  const floor = semver.minVersion(manifest.engines.node)!.version.split('.').slice(0, 2).join('.')
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), new RegExp(`Node \\(${floor.replace('.', '\\.')}\\+\\)`))
})
