/**
 * The packages as a user gets them: `npm run pack` makes the tarballs of @sandfleet/protocol,
 * command-line, client, trainer and cli; they install into an empty folder (`npm ci --offline`, every
 * third-party package from npm's cache at the versions of the repository's lock: no network) and
 * work from plain Node, without tsx or the repository: the libraries import and talk to a fleet,
 * their type declarations compile a consumer under `strict`, and `npx sandfleet serve` from the
 * packed CLI answers /healthz and runs Python and JavaScript.
 *
 * isolated-vm, an optional dependency of the CLI, compiles for about a minute when installed;
 * the install skips install scripts and takes the binary the repository's install built (same
 * Node) instead.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { offlineLock, type PackedPackage } from './helpers/offline-lock.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PACKAGES = [
  '@sandfleet/protocol',
  '@sandfleet/command-line',
  '@sandfleet/client',
  '@sandfleet/trainer',
  '@sandfleet/cli'
]
/** Plain Node: no loader, no flag inherited from the test runner. */
const PLAIN_ENV = { ...process.env, NODE_OPTIONS: '' }

let dir = ''
let app = ''
const packed = new Map<string, PackedPackage & { files: string[] }>()

/** Runs a command to completion; throws with its output when it fails. */
function run(command: string, args: string[], cwd: string, timeout = 120_000): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', timeout, env: PLAIN_ENV })
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandfleet-packed-'))
  // The process backend's sandboxes (uid 65534) bind the executor from the install: every folder
  // on its path must be searchable by others, as /tmp is (mkdtemp makes the folder 0700).
  chmodSync(dir, 0o755)
  app = join(dir, 'app')
  mkdirSync(app)
  const tarballs = run(process.execPath, [join(ROOT, 'scripts/pack.mjs'), '--out', join(dir, 'tarballs')], ROOT)
    .trim()
    .split('\n')
  for (const tarball of tarballs) {
    const manifest = JSON.parse(
      run('tar', ['-xzOf', tarball, 'package/package.json'], dir)
    ) as PackedPackage['manifest']
    const files = run('tar', ['-tzf', tarball], dir)
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''))
    packed.set(manifest.name, { manifest, spec: `file:../tarballs/${basename(tarball)}`, files })
  }
  const lock = offlineLock(JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')), 'app', [
    ...packed.values()
  ]) as { packages: Record<string, { dependencies: unknown }> }
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'app',
      version: '0.0.0',
      private: true,
      type: 'module',
      dependencies: lock.packages[''].dependencies
    })
  )
  writeFileSync(join(app, 'package-lock.json'), JSON.stringify(lock))
  run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], app)
  const built = join(ROOT, 'node_modules/isolated-vm/out/isolated_vm.node')
  if (existsSync(built)) {
    mkdirSync(join(app, 'node_modules/isolated-vm/out'), { recursive: true })
    copyFileSync(built, join(app, 'node_modules/isolated-vm/out/isolated_vm.node'))
  }
})

after(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true })
})

test('each tarball holds JavaScript and declarations, and its exports name them, not the TypeScript sources', () => {
  assert.deepEqual([...packed.keys()].sort(), [...PACKAGES].sort())
  for (const name of PACKAGES.filter((p) => p !== '@sandfleet/cli')) {
    const { manifest, files } = packed.get(name)!
    const exports = manifest.exports as Record<string, { types: string; default: string }>
    for (const [key, target] of Object.entries(exports)) {
      assert.match(target.default, /^\.\/dist\/.+\.js$/, `${name} ${key}`)
      assert.ok(
        files.includes(target.default.slice(2)) && files.includes(target.types.slice(2)),
        `${name} ${key}: ${JSON.stringify(target)} packed`
      )
    }
    assert.deepEqual(
      [manifest.main, manifest.types],
      [exports['.'].default, exports['.'].types],
      `${name}: main and types for tools that read no exports`
    )
    assert.deepEqual(
      files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
      [],
      `${name} ships no TypeScript source`
    )
    assert.ok(manifest.scripts === undefined, `${name}: no lifecycle script runs on a user's install`)
  }
  const cli = packed.get('@sandfleet/cli')!
  assert.deepEqual(cli.manifest.bin, { sandfleet: 'bin/sandfleet.mjs' })
  assert.ok(cli.files.includes('dist/sandbox-images/python/executor.py'), "the executor ships with the runner's code")
  const dependencies = Object.keys({ ...cli.manifest.dependencies, ...cli.manifest.optionalDependencies })
  assert.ok(
    dependencies.includes('fastify') && !dependencies.some((d) => d.startsWith('@sandfleet/')),
    `the CLI bundles the workspace and depends on the rest: ${dependencies.join(', ')}`
  )
  assert.deepEqual(Object.keys(cli.manifest.optionalDependencies ?? {}), ['isolated-vm'])
})

test("the declarations compile a strict consumer with tsc (the libraries' own types checked too)", () => {
  writeFileSync(
    join(app, 'consumer.ts'),
    [
      "import { SandfleetClient, type ClientOptions } from '@sandfleet/client'",
      "import { startFakeFleet } from '@sandfleet/client/testing'",
      "import { mathReward } from '@sandfleet/trainer'",
      "import type { ExecResult } from '@sandfleet/protocol'",
      "const options: ClientOptions = { url: 'http://127.0.0.1:1' }",
      'const client = new SandfleetClient(options)',
      "const result: Promise<ExecResult> = client.execute({ code: 'print(1)' })",
      "const reward: number = mathReward('\\\\boxed{2}', '2').reward",
      '// @ts-expect-error: typed, not any: code is a string',
      'void client.execute({ code: 1 })',
      'void result; void reward; void startFakeFleet',
      ''
    ].join('\n')
  )
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules/@types')]
      },
      files: ['consumer.ts']
    })
  )
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app)
})

test('sandfleet --help from the packed CLI lists the commands it has: not bench, whose harness stays in the repository', () => {
  const help = run('npx', ['--offline', 'sandfleet', '--help'], app, 60_000)
  for (const command of ['serve', 'gateway', 'runner', 'rollout', 'exec'])
    assert.match(help, new RegExp(`^  ${command} `, 'm'))
  assert.doesNotMatch(help, /bench/)
  const bench = spawnSync('npx', ['--offline', 'sandfleet', 'bench', 'step'], {
    cwd: app,
    encoding: 'utf8',
    timeout: 60_000,
    env: PLAIN_ENV
  })
  assert.equal(bench.status, 1)
  assert.match(
    bench.stderr,
    /the benchmarks are not in this installation .*: run sandfleet bench from a checkout of the repository/
  )
})

/** Starts `npx sandfleet serve` in the app (its own process group); resolves with its URL once it listens. */
async function startServe(): Promise<{ url: string; child: ChildProcess; output: () => string }> {
  const child = spawn(
    'npx',
    ['--offline', 'sandfleet', 'serve', '--port', '0', '--backend', 'process', '--pool-size', '1'],
    { cwd: app, env: PLAIN_ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] }
  )
  let output = ''
  child.stderr.on('data', (d: Buffer) => {
    output += d.toString()
  })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`serve did not listen within 60 s\n${output}`))
    }, 60_000)
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString()
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(output)
      if (m !== null) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`serve exited ${code}\n${output}`))
    })
  })
  return { url, child, output: () => output }
}

/** Stops the process group of `child` (npx, the CLI's shim and the CLI). */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.pid === undefined) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  process.kill(-child.pid, 'SIGTERM')
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
  }, 15_000)
  await exited
  clearTimeout(timer)
}

test('npx sandfleet serve from the packed CLI answers /healthz, runs Python and JavaScript; the packed client and trainer work from plain Node', async () => {
  const { url, child, output } = await startServe()
  try {
    const health = await fetch(`${url}/healthz`)
    assert.equal(health.status, 200)
    for (const [language, code] of [
      ['python', 'print(1+1)'],
      ['javascript', 'console.log(1+1)']
    ]) {
      const r = await fetch(`${url}/v1/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ language, code })
      })
      const body = (await r.json()) as { status: string; stdout: string }
      assert.deepEqual(
        [r.status, body.status, body.stdout],
        [200, 'ok', '2\n'],
        `${language}: ${JSON.stringify(body)}\n${output()}`
      )
    }
    const script = [
      "import { SandfleetClient } from '@sandfleet/client'",
      "import { mathReward } from '@sandfleet/trainer'",
      'const client = new SandfleetClient({ url: process.argv[1] })',
      "const r = await client.execute({ code: 'print(6*7)' })",
      'const s = await client.createSession()',
      "await s.execute({ code: 'x = 41' })",
      "const d = await s.execute({ code: 'x + 1' })",
      'await s.close(); await client.close()',
      "console.log(JSON.stringify({ status: r.status, stdout: r.stdout, display: d.display, reward: mathReward('The answer is \\\\boxed{42}.', '42').reward, symbolic: mathReward('\\\\boxed{\\\\sin^2 x + \\\\cos^2 x}', '1') }))"
    ].join('\n')
    const out = run(process.execPath, ['--input-type=module', '-e', script, url], app, 60_000)
    assert.deepEqual(JSON.parse(out), {
      status: 'ok',
      stdout: '42\n',
      display: [{ 'text/plain': '42' }],
      reward: 1,
      symbolic: { reward: 1, answer: '\\sin^2 x + \\cos^2 x', method: 'random_points' }
    })
  } finally {
    await stop(child)
  }
})
