/**
 * What `GET /v1/info` says each backend runs, held against what a job in that backend's sandbox sees: the Python
 * version a job prints is the one reported, and a package reported is imported by a job at that version.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunnerInfo } from '@sandfleet/protocol'
import { Runner } from '../../src/runner/runner.ts'
import { runnerConfig, type RunnerConfig } from '../../src/config.ts'
import { REPO_EXECUTOR } from '../helpers/docker.ts'

type Settings = Parameters<typeof runnerConfig>[0]

/** A runner of `settings` started, `body` run on it and its info, then closed whatever happened. */
async function withRunner(
  settings: Settings,
  body: (runner: Runner, info: RunnerInfo) => Promise<void>
): Promise<void> {
  const runner = new Runner(runnerConfig({ poolSize: 1, maxSessions: 0, ...settings } as Partial<RunnerConfig>))
  try {
    await runner.start()
    await body(runner, runner.info())
  } finally {
    await runner.close()
  }
}

/** What a job in the runner's Python sandbox prints of its own interpreter and of `pkg`'s version. */
async function seen(runner: Runner, pkg: string | undefined): Promise<{ python: string; version: string | null }> {
  const code = [
    'import json, platform, importlib.metadata as md',
    `pkg = ${JSON.stringify(pkg ?? '')}`,
    'v = None',
    'if pkg:',
    '    try:',
    '        v = md.version(pkg)',
    '    except md.PackageNotFoundError:',
    '        v = None',
    "print(json.dumps({'python': platform.python_version(), 'version': v}))"
  ].join('\n')
  const res = await runner.execute({ code, timeout_ms: 60_000 })
  assert.equal(res.status, 'ok', `${res.stderr} ${res.error?.message ?? ''}`)
  return JSON.parse(res.stdout) as { python: string; version: string | null }
}

/** The Python manifest and environment of `info` agree with what a job sees. */
async function pythonReportHolds(runner: Runner, info: RunnerInfo, runtime: RegExp): Promise<void> {
  const manifest = info.manifest
  assert.ok(manifest !== null, `${info.backend}: /v1/info has a manifest`)
  const environment = info.environments.python
  assert.ok(environment !== undefined, `${info.backend}: /v1/info says what runs Python`)
  assert.match(environment.runtime, runtime)
  assert.equal(environment.version, manifest.python)
  assert.deepEqual(environment.packages, manifest.packages)
  const named =
    Object.keys(manifest.packages).find((p) => p.toLowerCase() === 'numpy') ?? Object.keys(manifest.packages)[0]
  const job = await seen(runner, named)
  assert.equal(job.python, manifest.python, `${info.backend}: the Python a job runs is the one reported`)
  if (named !== undefined)
    assert.equal(job.version, manifest.packages[named], `${info.backend}: ${named} imports at the version reported`)
}

test('info: the process backend reports the Python and packages its sandboxes run, read from a sandbox', async () => {
  await withRunner({ backend: 'process', languages: ['python'] }, async (runner, info) => {
    await pythonReportHolds(runner, info, /^CPython$/)
    assert.equal(info.manifest?.image, 'host')
    assert.ok(Object.keys(info.manifest?.packages ?? {}).length > 0, 'the host Python has packages to report')
  })
})

test('info: auto reports what the backend it chose runs', async () => {
  await withRunner({ backend: 'auto', languages: ['python'], executorPath: REPO_EXECUTOR }, async (runner, info) => {
    await pythonReportHolds(runner, info, /^CPython$/)
  })
})

test('info: the docker backend reports its image manifest, which a job in a container agrees with', async () => {
  await withRunner(
    { backend: 'docker', languages: ['python'], executorPath: REPO_EXECUTOR, dockerSpares: 0 },
    async (runner, info) => {
      await pythonReportHolds(runner, info, /^CPython$/)
      assert.equal(info.manifest?.image, 'sandfleet/python')
    }
  )
})

test('info: the unsafe backend reports the host Python it runs', async () => {
  await withRunner({ backend: 'unsafe', languages: ['python'] }, async (runner, info) => {
    await pythonReportHolds(runner, info, /^CPython$/)
  })
})

test("info: the pyodide backend reports Pyodide's Python and the distributions of its package zip", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-info-'))
  const zip = join(dir, 'packages.zip')
  const made = spawnSync('python3', [
    '-c',
    `import zipfile
with zipfile.ZipFile(${JSON.stringify(zip)}, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('sfdist/__init__.py', 'VALUE = 1\\n')
    z.writestr('sfdist-1.2.3.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: sfdist\\nVersion: 1.2.3\\n')`
  ])
  assert.equal(made.status, 0, String(made.stderr))
  try {
    await withRunner({ backend: 'pyodide', languages: ['python'], pyodidePackages: zip }, async (runner, info) => {
      assert.deepEqual(info.manifest?.packages, { sfdist: '1.2.3' })
      await pythonReportHolds(runner, info, /^Pyodide \d+\.\d+\.\d+ \(CPython on WebAssembly\)$/)
      assert.equal(info.manifest?.image, 'pyodide')
      assert.match(info.manifest?.os ?? '', /^Emscripten [\d.]+ \(WebAssembly\)$/)
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("info: the javascript backend reports V8's version, the one its isolates run", async () => {
  await withRunner({ languages: ['javascript'] }, async (runner, info) => {
    assert.equal(info.manifest, null)
    const environment = info.environments.javascript
    assert.ok(environment !== undefined, '/v1/info says what runs JavaScript')
    assert.match(environment.runtime, /^V8 \(isolated-vm/)
    assert.equal(environment.version, process.versions.v8)
    assert.deepEqual(environment.packages, {})
    assert.equal(runner.load().pools?.javascript?.backend, 'javascript', "the load report names each pool's backend")
  })
})
