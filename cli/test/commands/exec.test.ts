import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseExecArgs } from '../../src/commands/exec.ts'

const BIN = fileURLToPath(new URL('../../../bin/sandfleet.mjs', import.meta.url))
const run = (args: string[], input: string): ReturnType<typeof spawnSync> =>
  spawnSync(process.execPath, [BIN, 'exec', ...args], { input, encoding: 'utf8', timeout: 60_000 })

test('exec arguments: request fields, --url, runner flags; a bad value names its flag', () => {
  const a = parseExecArgs(['solve.py', '--timeout-ms', '5000', '--memory-mb=256', '--json', '--backend', 'process'])
  assert.deepEqual(
    [a.source, a.request, a.json, a.runner],
    ['solve.py', { timeout_ms: 5000, memory_mb: 256 }, true, { backend: 'process' }]
  )
  assert.equal(parseExecArgs(['-', '--url', 'http://127.0.0.1:9']).url, 'http://127.0.0.1:9')
  assert.throws(() => parseExecArgs(['-', '--timeout-ms', 'soon']), /--timeout-ms: needs a whole number/)
  assert.throws(() => parseExecArgs(['-', '--language', 'cobol']), /--language: must be one of/)
  assert.throws(() => parseExecArgs([]), /pass a file, or -/)
  assert.throws(
    () => parseExecArgs(['-', '--url', 'http://x', '--backend', 'process']),
    /runner flags only apply without --url/
  )
})

test('sandfleet exec - runs stdin in a real local sandbox: output printed, exit code passed on', () => {
  const ok = run(['-', '--backend', 'process'], 'import os\nprint(6 * 7, os.getuid())')
  assert.deepEqual([ok.status, ok.stdout], [0, '42 65534\n'])
  const exit = run(['-', '--backend', 'process'], 'import sys\nprint("bye")\nsys.exit(3)')
  assert.deepEqual([exit.status, exit.stdout], [3, 'bye\n'])
  const slow = run(['-', '--backend', 'process', '--timeout-ms', '300'], 'while True: pass')
  assert.equal(slow.status, 1)
  assert.match(String(slow.stderr), /\[sandfleet: timeout/)
})
