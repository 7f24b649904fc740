/**
 * The executor works on CPython 3.11 and 3.12 with nothing but the standard library: the core
 * statuses, stdin, files and the no-leak guarantee under every such interpreter on this machine
 * (Debian's python3 and the version manager's builds), through the unsafe driver so that only
 * the interpreter changes.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { Runner } from '../src/runner/runner.ts'
import { runnerConfig } from '../src/config.ts'

/** Interpreter path → its version, for every CPython 3.11+ found. */
function interpreters(): Map<string, string> {
  const candidates = ['/usr/bin/python3.11', '/usr/bin/python3.12', '/usr/bin/python3.13']
  const pyenv = '/root/.pyenv/versions'
  if (existsSync(pyenv)) for (const v of readdirSync(pyenv)) candidates.push(`${pyenv}/${v}/bin/python3`)
  const found = new Map<string, string>()
  for (const path of candidates) {
    if (!existsSync(path)) continue
    try {
      const version = execFileSync(path, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
        encoding: 'utf8'
      }).trim()
      if (Number(version.split('.')[1]) >= 11) found.set(path, version)
    } catch {}
  }
  return found
}

const found = interpreters()

test('CPython 3.11 and 3.12 are both here to test the executor against', () => {
  const versions = new Set(found.values())
  assert.ok(
    versions.has('3.11') && versions.has('3.12'),
    `found ${[...found].map(([p, v]) => `${v} (${p})`).join(', ') || 'none'}`
  )
})

for (const [path, version] of found) {
  test(`executor on CPython ${version} (${path}): statuses, stdin, files, no leak between jobs`, async () => {
    const runner = new Runner(
      runnerConfig({
        backend: 'unsafe',
        pythonPath: path,
        poolSize: 1,
        languages: ['python'],
        maxSessions: 0,
        id: `py-${version}`
      })
    )
    try {
      await runner.start()
      const run = async (code: string, extra: object = {}) => await runner.execute({ code, ...extra })
      const ok = await run('import sys; print(sys.version_info[:2])')
      assert.deepEqual([ok.status, ok.stdout], ['ok', `(${version.replace('.', ', ')})\n`])
      const err = await run('def f():\n    raise ValueError("bad")\nf()')
      assert.deepEqual([err.status, err.error?.type, err.error?.message], ['error', 'ValueError', 'bad'])
      assert.doesNotMatch(err.error?.traceback ?? '', /executor\.py/, "only the user's frames")
      const exit = await run('import sys; sys.exit(3)')
      assert.deepEqual([exit.status, exit.exit_code], ['error', 3])
      // A job that replaces builtins the executor reads after it (int, isinstance, str) still gets its own exit.
      const patched = await run(
        'import builtins\nbuiltins.int = str\nbuiltins.isinstance = None\nbuiltins.str = None\nraise SystemExit(0)'
      )
      assert.deepEqual([patched.status, patched.exit_code], ['ok', 0])
      const patchedExit = await run('import builtins\nbuiltins.int = str\nraise SystemExit(4)')
      assert.deepEqual([patchedExit.status, patchedExit.exit_code], ['error', 4])
      assert.equal((await run('while True: pass', { timeout_ms: 300 })).status, 'timeout')
      assert.equal((await run('x = bytearray(512 << 20)', { memory_mb: 64 })).status, 'memory')
      assert.equal((await run('print(input()[::-1])', { stdin: 'abc' })).stdout, 'cba\n')
      const files = await run('open("out.txt", "w").write(open("in.txt").read() * 2)', {
        files: { 'in.txt': Buffer.from('ab').toString('base64') },
        fetch_files: ['out.txt']
      })
      assert.equal(Buffer.from(files.files['out.txt'] ?? '', 'base64').toString(), 'abab')
      await run('import json\njson.dumps = None\nLEAK = 1\nopen("left.txt", "w").write("x")')
      const after = await run('import json, os\nprint(json.dumps(1), "LEAK" in globals(), os.path.exists("left.txt"))')
      assert.equal(after.stdout, '1 False False\n')
    } finally {
      await runner.close()
    }
  })
}
