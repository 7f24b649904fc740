/**
 * The CLI's bundle (bin/cli-bundle.mjs): built by esbuild from the sources, keyed by them (an edit
 * makes a new build; an unchanged tree reuses the old one), and it runs like the sources: same
 * commands, and each module's `import.meta.url` still names its source file.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cliBundle, sourceKey } from '../bin/cli-bundle.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BIN = join(ROOT, 'bin/sandfleet.mjs')

test("the source key follows every source file's size and modification time, and nothing else", () => {
  const root = mkdtempSync(join(tmpdir(), 'sandfleet-key-'))
  try {
    mkdirSync(join(root, 'cli/src'), { recursive: true })
    mkdirSync(join(root, 'services/runner/test'), { recursive: true })
    writeFileSync(join(root, 'cli/src/main.ts'), 'export {}\n')
    const first = sourceKey(root)
    assert.match(first, /^[0-9a-f]{16}$/)
    assert.equal(sourceKey(root), first)
    writeFileSync(join(root, 'services/runner/test/x.test.ts'), 'tests are not bundled\n')
    assert.equal(sourceKey(root), first)
    utimesSync(join(root, 'cli/src/main.ts'), new Date(2020, 0, 1), new Date(2020, 0, 1))
    const touched = sourceKey(root)
    assert.notEqual(touched, first)
    writeFileSync(join(root, 'cli/src/other.ts'), 'export const a = 1\n')
    assert.notEqual(sourceKey(root), touched)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("the bundle is built once for a tree of sources, runs the CLI, and keeps each module's own URL", async () => {
  const cache = mkdtempSync(join(tmpdir(), 'sandfleet-bundle-'))
  try {
    const url = await cliBundle(cache)
    assert.ok(url !== undefined, 'no bundle was built')
    const main = fileURLToPath(url)
    const builtAt = statSync(main).mtimeMs
    assert.equal(await cliBundle(cache), url, 'the same sources give the same build')
    assert.equal(statSync(main).mtimeMs, builtAt, 'and it is not rebuilt')
    const help = spawnSync(process.execPath, ['--no-node-snapshot', main, '--help'], {
      encoding: 'utf8',
      timeout: 30_000
    })
    assert.equal(help.status, 0, help.stderr)
    assert.match(help.stdout, /usage: sandfleet COMMAND/)
    // The executor is found beside the runner's sources, not beside the bundle.
    const js = readdirSync(join(main, '..'))
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(main, '..', f), 'utf8'))
      .join('\n')
    assert.ok(
      js.includes(JSON.stringify(new URL('../services/runner/src/kits/executor/python-image.ts', import.meta.url).href))
    )
    assert.ok(!js.includes('import.meta.url'))
    assert.ok(statSync(join(main, '../pyodide-host.js')).isFile(), "the pyodide host's entry is built beside the CLI")
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
})

test('sandfleet exec runs Python on the pyodide backend from the bundle (its host process started from the bundle too)', () => {
  // A host entry inherited from elsewhere is not used: the bundle names its own.
  const env = { ...process.env, _SANDFLEET_BUNDLE_PYODIDE_HOST: '/nonexistent/pyodide-host.js' }
  const run = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'exec', '-', '--backend', 'pyodide'], {
    input: 'import sys\nprint(sys.platform, 6 * 7)',
    encoding: 'utf8',
    timeout: 120_000,
    env
  })
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stdout, 'emscripten 42\n')
})

test('sandfleet runs from the sources through tsx when asked (SANDFLEET_NO_BUNDLE=1), with the same commands', () => {
  const help = spawnSync(process.execPath, ['--no-node-snapshot', BIN, '--help'], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, SANDFLEET_NO_BUNDLE: '1' }
  })
  assert.equal(help.status, 0, help.stderr)
  assert.match(help.stdout, /usage: sandfleet COMMAND/)
})
