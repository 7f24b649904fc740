/**
 * The Python client's suite (clients/python/tests, pytest) from `npm test`: it starts real fleets
 * (`sandfleet serve` from this checkout, process backend) and runs the sync and asyncio clients
 * and the examples against them. Debian's python3-httpx and python3-pytest are its only needs.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { GRACES, LIMITS } from '@sandfleet/protocol'

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
// Debian's interpreter, which has python3-httpx and python3-pytest (not a version manager's shim).
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'

test('the Python client passes its pytest suite against a real fleet', () => {
  const run = spawnSync(PYTHON, ['-m', 'pytest', 'tests', '-q', '-p', 'no:cacheprovider'], {
    cwd: PACKAGE,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', SANDFLEET_NODE: process.execPath }
  })
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`)
  assert.match(run.stdout, /\d+ passed/)
  assert.doesNotMatch(run.stdout, /skipped|xfail/)
})

test("the Python client's defaults are the contract's: timeout_ms and the deadline slack", () => {
  const run = spawnSync(
    PYTHON,
    [
      '-c',
      'import inspect, json, sandfleet.aio as a\nprint(json.dumps([a.DEFAULT_TIMEOUT_MS, inspect.signature(a.AsyncClient).parameters["deadline_slack_s"].default]))'
    ],
    {
      cwd: PACKAGE,
      encoding: 'utf8',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }
    }
  )
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(JSON.parse(run.stdout), [LIMITS.defaultTimeoutMs, GRACES.clientSlackMs / 1000])
})
