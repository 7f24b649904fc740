import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { GRACES } from '@sandfleet/protocol'
import { SANDBOX_ENV, envLines, sandboxEnv } from '../../../src/kits/executor/sandbox-env.ts'
import { PYTHON_IMAGE_DIR } from '../../../src/kits/executor/python-image.ts'
import { SANDBOX_MAX_FILE_MB } from '../../../src/sandbox/contract.ts'

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'
const RUNNER_SRC = join(import.meta.dirname, '../../../src')

/** Every file under `dir` whose name `keep` accepts. */
function files(dir: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) files(path, keep, out)
    else if (keep(name)) out.push(path)
  }
  return out
}

test("a sandbox's environment: what its driver says, under the table's names, with the runner's soft stop and file-size cap", () => {
  assert.deepEqual(sandboxEnv({ workDir: '/tmp/work', maxProcs: 64, channel: undefined }), {
    SANDFLEET_WORKDIR: '/tmp/work',
    SANDFLEET_MAX_PROCS: '64',
    SANDFLEET_SOFT_STOP_MS: String(GRACES.softStopMs),
    SANDFLEET_MAX_FILE_MB: String(SANDBOX_MAX_FILE_MB)
  })
  assert.deepEqual(envLines({ A: '1', B: 'x=y' }), ['A=1', 'B=x=y'])
})

test("the sandbox's Python reads the same names from its own one table (snake_case keys)", () => {
  const run = spawnSync(
    PYTHON,
    ['-c', 'import json; from sandfleet_sandbox.sandbox_env import SANDBOX_ENV; print(json.dumps(SANDBOX_ENV))'],
    { cwd: PYTHON_IMAGE_DIR, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } }
  )
  assert.equal(run.status, 0, run.stderr)
  const snake = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
  assert.deepEqual(
    JSON.parse(run.stdout),
    Object.fromEntries(Object.entries(SANDBOX_ENV).map(([key, name]) => [snake(key), name]))
  )
})

test("each name the runner hands a sandbox is written once on each side: the runner's table, the sandbox's", () => {
  // a string that is the name, a template that sets it (`NAME=${…}`) or an object's key; a comment's `NAME` is not one
  const quoted = (name: string): RegExp => new RegExp(`['"]${name}['"=]|\`${name}=|(?<![\\w\`])${name}\\s*:`)
  const sources = [
    ...files(RUNNER_SRC, (n) => /\.(ts|js|cjs)$/.test(n)),
    ...files(join(PYTHON_IMAGE_DIR, 'sandfleet_sandbox'), (n) => n.endsWith('.py'))
  ]
  const writers = Object.values(SANDBOX_ENV).map((name) => ({
    name,
    in: sources.filter((f) => quoted(name).test(readFileSync(f, 'utf8'))).map((f) => relative(PYTHON_IMAGE_DIR, f))
  }))
  assert.deepEqual(
    writers.filter((w) => w.in.length !== 2),
    [],
    'each in sandbox-env.ts and sandbox_env.py alone'
  )
})
