import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveExecRequest } from '@sandfleet/protocol'
import { runnerConfig } from '../../../src/config.ts'
import { PyodideDriver } from '../../../src/backends/pyodide/pyodide-driver.ts'

test('pyodide: a zip of pure-Python packages is importable; a pre-imported, warmed package is in the image and its state does not leak', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-pkgs-'))
  const zip = join(dir, 'packages.zip')
  const made = spawnSync(
    'python3',
    [
      '-c',
      `import zipfile
z = zipfile.ZipFile(${JSON.stringify(zip)}, 'w')
z.writestr('sfpkg/__init__.py', 'VALUE = 41\\ncounter = []\\n')
z.writestr('sfpkg/extra.py', 'def twice(x):\\n    return 2 * x\\n')
z.close()`
    ],
    { encoding: 'utf8' }
  )
  assert.equal(made.status, 0, made.stderr)
  const logs: string[] = []
  const driver = new PyodideDriver({
    config: runnerConfig({
      pyodidePackages: zip,
      pyodidePreimport: ['sfpkg'],
      pyodideWarmup: 'import sfpkg\nsfpkg.counter.append("warm")'
    }),
    logger: {
      debug() {},
      info(_f, m) {
        logs.push(m ?? '')
      },
      warn() {},
      error() {}
    }
  })
  const sandbox = driver.createSandbox.bind(driver)
  try {
    await driver.check()
    assert.match(
      logs.join('\n'),
      /packages: the Python stdlib and the pure-Python packages in .*packages\.zip; imported into the image: sfpkg; a warm-up snippet run into the image/
    )
    const s = sandbox('pyodide-packages-test')
    try {
      await s.start()
      const run = async (code: string) =>
        await s.execute({ request: resolveExecRequest({ code }), maxOutputBytes: 65536 })
      const code =
        'import sys, sfpkg, sfpkg.extra\nsfpkg.counter.append(1)\nprint(sfpkg.VALUE + 1, len(sfpkg.counter), sfpkg.extra.twice(21), "sfpkg.extra" in sys.modules)'
      const first = await run(code)
      assert.deepEqual([first.status, first.stdout], ['ok', '42 2 42 True\n'], first.stderr)
      const second = await run(code)
      assert.equal(second.stdout, '42 2 42 True\n', "the warm-up's append is in the image, the previous job's is gone")
      const probe = await run('import sys; print("sfpkg" in sys.modules, "sfpkg.extra" in sys.modules)')
      assert.equal(probe.stdout, 'True False\n', 'sfpkg is in the image, sfpkg.extra only in the jobs that imported it')
    } finally {
      await s.close()
    }
  } finally {
    await driver.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
