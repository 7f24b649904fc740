/**
 * Every command answers --help from its declared flags (exit 0, nothing started), and
 * `sandfleet --version` prints the CLI's version.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../../bin/sandfleet.mjs', import.meta.url))
const sandfleet = (...args: string[]): ReturnType<typeof spawnSync> =>
  spawnSync(process.execPath, ['--no-node-snapshot', BIN, ...args], { encoding: 'utf8', timeout: 60_000, input: '' })

const EXPECTED: Record<string, RegExp[]> = {
  serve: [
    /usage: sandfleet serve \[flags\]/,
    /--port N {3}\[SANDFLEET_PORT\]/,
    /--backend auto\|process\|docker\|pyodide\|unsafe/,
    /--max-in-flight N/
  ],
  gateway: [/usage: sandfleet gateway \[flags\]/, /--runners A,B,… {3}\[SANDFLEET_RUNNERS\]/],
  runner: [/usage: sandfleet runner \[flags\]/, /--pool-size N {3}\[SANDFLEET_POOL_SIZE\]/],
  exec: [/usage: sandfleet exec FILE\|- \[flags\]/, /--timeout-ms N\n/, /--backend/],
  rollout: [
    /usage: sandfleet rollout \[flags\]/,
    /--engine URL\[,URL…\] {3}\[SANDFLEET_ENGINE\]/,
    /--fleet URL {3}\[SANDFLEET_URL\]/
  ],
  bench: [
    /usage: sandfleet bench MODE|SCENARIO \[flags\]/,
    /step +N calls released at once/,
    /--duration X {3}\[SANDFLEET_BENCH_DURATION\]/,
    /trivial-c64/
  ]
}

for (const [command, patterns] of Object.entries(EXPECTED)) {
  test(`sandfleet ${command} --help prints its flags and exits 0 without starting anything`, () => {
    const run = sandfleet(command, '--help')
    assert.equal(run.status, 0, String(run.stderr))
    for (const pattern of patterns) assert.match(String(run.stdout), pattern)
  })
}

test('sandfleet --help in the repository lists every command, bench included (the harness is here)', () => {
  const run = sandfleet('--help')
  assert.equal(run.status, 0, String(run.stderr))
  for (const command of ['serve', 'gateway', 'runner', 'rollout', 'bench', 'exec'])
    assert.match(String(run.stdout), new RegExp(`^  ${command} `, 'm'))
})

test('sandfleet bench runs from a working directory outside the checkout', () => {
  const elsewhere = mkdtempSync(join(tmpdir(), 'sandfleet-cwd-'))
  try {
    const run = spawnSync(process.execPath, ['--no-node-snapshot', BIN, 'bench', '--help'], {
      encoding: 'utf8',
      timeout: 60_000,
      input: '',
      cwd: elsewhere
    })
    assert.equal(run.status, 0, String(run.stderr))
    assert.match(String(run.stdout), /usage: sandfleet bench MODE\|SCENARIO/)
  } finally {
    rmSync(elsewhere, { recursive: true, force: true })
  }
})

test("sandfleet --version prints the CLI package's version; an unknown flag is named", () => {
  const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
    .version
  const run = sandfleet('--version')
  assert.equal(run.status, 0, String(run.stderr))
  assert.equal(String(run.stdout).trim(), version)
  const bad = sandfleet('serve', '--pool-sise', '2')
  assert.equal(bad.status, 1)
  assert.match(String(bad.stderr), /--pool-sise: unknown flag/)
})
