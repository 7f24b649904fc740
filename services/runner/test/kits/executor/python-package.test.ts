/**
 * The sandbox's Python package (sandbox-images/python/sandfleet_sandbox/) from `npm test`: its pytest
 * suite, which also fails while executor.py or session_host.py is not what build.py makes of the
 * package; and its defaults, the contract's.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { LIMITS } from '@sandfleet/protocol'
import { PYTHON_IMAGE_DIR } from '../../../src/kits/executor/python-image.ts'

// Debian's interpreter, which has python3-pytest (not a version manager's shim).
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'

test('the sandbox package passes its pytest suite, and the built programs are up to date', () => {
  const run = spawnSync(PYTHON, ['-m', 'pytest', 'test', '-q', '-p', 'no:cacheprovider'], {
    cwd: PYTHON_IMAGE_DIR,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }
  })
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`)
  assert.match(run.stdout, /\d+ passed/)
  assert.doesNotMatch(run.stdout, /skipped|xfail/)
})

test('the Python side defaults memory_mb and timeout_ms as the contract does', () => {
  const limits = readFileSync(`${PYTHON_IMAGE_DIR}sandfleet_sandbox/limits.py`, 'utf8')
  assert.equal(Number(/^DEFAULT_MEMORY_MB = (\d+)$/m.exec(limits)?.[1]), LIMITS.defaultMemoryMb)
  assert.equal(Number(/^DEFAULT_TIMEOUT_MS = (\d+)$/m.exec(limits)?.[1]), LIMITS.defaultTimeoutMs)
})
