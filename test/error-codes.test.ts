import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const root = join(import.meta.dirname, '..')
const SOURCE_ROOTS = ['packages', 'services', 'cli', 'sandbox-images']

/** Source files of the project (not tests, not dependencies). */
function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'test' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) sources(path, out)
    else if (/\.(ts|js|mjs|py)$/.test(name) && !name.endsWith('.test.ts')) out.push(path)
  }
  return out
}

const files = SOURCE_ROOTS.flatMap((d) => sources(join(root, d)))
const docs = readFileSync(join(root, 'docs/errors.md'), 'utf8')
const documented = new Set([...docs.matchAll(/`(SF_ERR_[A-Z0-9_]*[A-Z0-9])`/g)].map((m) => m[1]))

test('every error code used in the sources is documented in docs/errors.md', () => {
  const missing: string[] = []
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    for (const [, code] of text.matchAll(/['"`](SF_ERR_[A-Z0-9_]*[A-Z0-9])['"`]/g)) {
      if (!documented.has(code)) missing.push(`${code} (${relative(root, file)})`)
    }
  }
  assert.deepEqual([...new Set(missing)], [], 'codes missing from docs/errors.md')
  assert.ok(documented.size >= 40, 'the scan found the documented codes')
})

test('every error code is defined by exactly one registry', () => {
  const definedIn = new Map<string, string[]>()
  for (const file of files.filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(file, 'utf8')
    for (const [, code] of text.matchAll(/^\s*(SF_ERR_[A-Z0-9_]*[A-Z0-9]):\s*\{/gm)) {
      definedIn.set(code, [...(definedIn.get(code) ?? []), relative(root, file)])
    }
  }
  assert.ok(definedIn.size >= 30, 'the scan found the registries')
  const twice = [...definedIn]
    .filter(([, where]) => where.length > 1)
    .map(([code, where]) => `${code}: ${where.join(', ')}`)
  assert.deepEqual(twice, [])
  const rows = [...docs.matchAll(/^\| `(SF_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1])
  assert.deepEqual(
    rows.filter((c, i) => rows.indexOf(c) !== i),
    [],
    'a code has one row in docs/errors.md'
  )
})

test('every code the services answer or put in a result is a key of their registries', async () => {
  const { RUNNER_ERRORS } = await import('../services/runner/src/errors.ts')
  const { GATEWAY_ERRORS } = await import('../services/gateway/src/errors.ts')
  const registered = new Set([...Object.keys(RUNNER_ERRORS), ...Object.keys(GATEWAY_ERRORS)])
  const service = files.filter((f) => /\/services\/[^/]+\/src\/|\/sandbox-images\/python\/sandfleet_sandbox\//.test(f))
  assert.ok(service.length > 50, "the scan found the services' sources")
  const outside: string[] = []
  for (const file of service) {
    for (const [, code] of readFileSync(file, 'utf8').matchAll(/['"`](SF_ERR_[A-Z0-9_]*[A-Z0-9])['"`]/g)) {
      if (!registered.has(code)) outside.push(`${code} (${relative(root, file)})`)
    }
  }
  assert.deepEqual([...new Set(outside)], [])
})

test('no error is thrown with a code of its own beside the registries (Object.assign(new Error(…), { code }))', () => {
  const adHoc = files
    .filter((f) => f.endsWith('.ts'))
    .flatMap((file) =>
      [
        ...readFileSync(file, 'utf8').matchAll(
          /Object\.assign\(\s*new Error\((?:[^()]|\([^()]*\))*\)\s*,\s*\{[^}]*\bcode\s*:/g
        )
      ].map(() => relative(root, file))
    )
  assert.deepEqual(adHoc, [])
})
