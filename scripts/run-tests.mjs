#!/usr/bin/env node
// Runs every *.test.ts under packages/, services/, cli/, clients/, benchmarks/ and test/ with Node's built-in test
// runner (TypeScript through tsx). Extra arguments are passed to `node --test` (for example
// `npm test -- --test-name-pattern=timeout`). Set SANDFLEET_TEST_FILTER to a substring of a path
// to run a subset of files.
import { readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { spawnSync } from 'node:child_process'

const root = new URL('..', import.meta.url).pathname
const roots = ['packages', 'services', 'cli', 'clients', 'benchmarks', 'test']
const files = []
function walk(dir) {
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return
  }
  for (const name of entries) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (name.endsWith('.test.ts')) files.push(relative(root, path))
  }
}
for (const r of roots) walk(join(root, r))
const filter = process.env.SANDFLEET_TEST_FILTER
const selected = files.sort().filter((f) => !filter || f.includes(filter))
if (selected.length === 0) {
  console.error('run-tests: no test files found')
  process.exit(1)
}
const args = [
  '--no-node-snapshot',
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  ...process.argv.slice(2),
  ...selected
]
const { status, signal } = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
process.exit(status ?? (signal ? 1 : 0))
