import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildGatewayApp, loadGatewayConfig } from '@sandfleet/gateway'
import { failedResult, type ExecResult } from '@sandfleet/protocol'
import {
  fleetRuntimes,
  pistonCompat,
  UNREPORTED_VERSIONS,
  type PistonOptions
} from '../../../src/apis/piston/piston.ts'
import { callOf, toExecRequest, toRun } from '../../../src/apis/piston/piston-map.ts'
import { echoRunner, fakeInfo } from '../../helpers/fake-runner.ts'
import { fleetFault, runPython } from '../helpers.ts'

const runtimes: PistonOptions['runtimes'] = async () => [{ language: 'python', version: '3.11.2' }]

let app: FastifyInstance
before(async () => {
  app = Fastify()
  await app.register(pistonCompat, { execute: runPython, runtimes })
})
after(async () => {
  await app.close()
})

const body = (more: Record<string, unknown> = {}): Record<string, unknown> => ({
  language: 'python',
  version: '*',
  files: [{ content: 'print(1)' }],
  ...more
})

/** The plugin over an execution path that answers every call with `result`. */
async function answering(result: ExecResult): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const one = Fastify()
  try {
    await one.register(pistonCompat, { execute: async () => result, runtimes })
    const res = await one.inject({ method: 'POST', url: '/api/v2/execute', payload: body() })
    return { status: res.statusCode, headers: res.headers, body: res.json() }
  } finally {
    await one.close()
  }
}

test('the answer names the version the fleet runs, whatever version was asked', async () => {
  const res = await app.inject({ method: 'POST', url: '/api/v2/execute', payload: body({ version: '3.10.0' }) })
  assert.deepEqual([res.statusCode, res.json().version, res.json().run.stdout], [200, '3.11.2', '1\n'])
})

test("a fleet fault is a retriable 5xx in Piston's {message}, never a run: busy 503 with Retry-After, a failure 500", async () => {
  for (const [status, http] of [
    ['overloaded', 503],
    ['queue_timeout', 503],
    ['infra_error', 500]
  ] as const) {
    const res = await answering(await fleetFault(status, 'no sandbox')({ code: '' }))
    assert.equal(res.status, http, status)
    assert.deepEqual(res.body, { message: `${status}: no sandbox` })
    assert.equal(res.headers['retry-after'], http === 503 ? '1' : undefined, status)
  }
  const one = Fastify()
  try {
    await one.register(pistonCompat, {
      execute: async () => {
        throw new Error('the router broke')
      },
      runtimes
    })
    const res = await one.inject({ method: 'POST', url: '/api/v2/execute', payload: body() })
    assert.deepEqual([res.statusCode, res.json()], [500, { message: 'infra_error: the router broke' }])
  } finally {
    await one.close()
  }
})

test("a runner's refusal is Piston's 400 {message}", async () => {
  const res = await answering(
    failedResult('invalid_request', 'SF_ERR_REQUEST_INVALID', "memory_mb 20 is under this runner's floor")
  )
  assert.deepEqual(
    [res.status, res.body],
    [400, { message: "invalid_request: memory_mb 20 is under this runner's floor" }]
  )
})

test("how a run ended, in Piston's words: memory MO, killed SG, both SIGKILL with no code; a cut output said in stderr", async () => {
  const base = { ...failedResult('ok', '', ''), error: null, exit_code: 0, stdout: 'x', duration_ms: 12.4, cpu_ms: 3.6 }
  assert.deepEqual(toRun({ ...base, status: 'memory', exit_code: null }), {
    stdout: 'x',
    stderr: '',
    output: 'x',
    code: null,
    signal: 'SIGKILL',
    message: 'Memory limit exceeded',
    status: 'MO',
    wall_time: 12,
    cpu_time: 4
  })
  assert.deepEqual(
    [toRun({ ...base, status: 'killed', exit_code: null })].map((r) => [r.code, r.signal, r.status]),
    [[null, 'SIGKILL', 'SG']]
  )
  const cut = toRun({ ...base, truncated: { stdout: true, stderr: false } })
  assert.match(cut.stderr, /stdout truncated/)
  assert.equal(cut.output, cut.stdout + cut.stderr)
})

test("the request a body becomes: run_timeout and run_memory_limit in the fleet's units, Piston's 3 s by default within the deployment's limit", () => {
  const req = {
    language: 'node',
    version: '*',
    files: [{ content: 'console.log(1)' }],
    run_memory_limit: 64 * 2 ** 20 + 1,
    run_timeout: 250
  }
  assert.deepEqual(toExecRequest(req, 10_000), {
    language: 'javascript',
    code: 'console.log(1)',
    timeout_ms: 250,
    memory_mb: 65
  })
  assert.deepEqual(
    callOf(
      { language: 'py', version: '*', files: [{ content: 'cHJpbnQoMSk=', encoding: 'base64' }], run_memory_limit: -1 },
      2000
    ),
    { code: 'print(1)', timeout_ms: 2000 }
  )
  assert.equal(toExecRequest({ language: 'python', version: '*', files: [{ content: 'x' }] }, 60_000).timeout_ms, 3000)
})

test('bad input is a 400 {message} naming its field', async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ version: '*', files: [{ content: 'x' }] }, /^language /],
    [body({ version: undefined }), /^version /],
    [body({ files: [{ name: 'a.py' }] }), /^files\[0\]\.content /],
    [body({ files: [{ content: 'x', encoding: 'rot13' }] }), /^files\[0\]\.encoding /],
    // what a sandbox could not take: content not of its encoding, a name that is no writable place
    [body({ files: [{ content: 'hello world!', encoding: 'base64' }] }), /^files\[0\]\.content is not base64/],
    [body({ files: [{ content: 'abc', encoding: 'hex' }] }), /^files\[0\]\.content is not hex/],
    [
      body({ files: [{ content: 'x' }, { name: '/etc/passwd', content: 'y' }] }),
      /^files\[1\]\.name "\/etc\/passwd" is outside/
    ],
    [body({ stdin: 5 }), /^stdin /],
    [body({ args: [1] }), /^args /],
    [body({ run_timeout: 0 }), /^run_timeout /],
    [body({ run_memory_limit: 1024 }), /^run_memory_limit /],
    [body({ language: 'js', args: ['a'] }), /^args: javascript/]
  ]
  for (const [payload, message] of cases) {
    const res = await app.inject({ method: 'POST', url: '/api/v2/execute', payload })
    assert.equal(res.statusCode, 400, JSON.stringify(payload))
    assert.match(res.json().message, message, JSON.stringify(payload))
  }
})

test("/runtimes: the languages the runners report, Python's version from their manifest, asked once for many calls", async () => {
  const runner = echoRunner('r1')
  let asked = 0
  const info = runner.info.bind(runner)
  runner.info = async () => {
    asked++
    return {
      ...(await info()),
      manifest: {
        image: 'sandfleet/python',
        build: 'debootstrap',
        os: 'Debian',
        python: '3.11.2',
        executor: '/x',
        packages: {}
      }
    }
  }
  const member = { routable: true, load: { ...(await runner.load()), languages: ['python'] }, client: runner }
  const list = fleetRuntimes({ members: [member] } as never)
  assert.deepEqual(await list(), [{ language: 'python', version: '3.11.2' }])
  await list()
  assert.equal(asked, 1)
  const bare = fleetRuntimes({
    members: [{ routable: true, load: null, client: { info: async () => fakeInfo(await runner.load()) } }]
  } as never)
  assert.deepEqual(
    await bare(),
    [
      { language: 'python', version: UNREPORTED_VERSIONS.python },
      { language: 'javascript', version: UNREPORTED_VERSIONS.javascript }
    ],
    'both before any load report; no manifest, no version claimed'
  )
})

test("on the gateway, /execute goes through the pipeline: the deployment's limits as Piston's 400, a tenant past its quota a 429 {message} with Retry-After", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sf-piston-keys-'))
  await writeFile(join(dir, 'keys'), 'piston-slow-key slow ratePerSecond=0.001\n')
  const config = loadGatewayConfig({
    env: {},
    values: { runners: [], apiKeysFile: join(dir, 'keys'), maxCodeBytes: 100 }
  })
  const { app: gw } = await buildGatewayApp({ config, clients: [echoRunner()], logger: false })
  try {
    const headers = { authorization: 'Bearer piston-slow-key' }
    const over = await gw.inject({
      method: 'POST',
      url: '/api/v2/execute',
      headers,
      payload: body({ files: [{ content: 'x'.repeat(101) }] })
    })
    assert.equal(over.statusCode, 400)
    assert.match(
      over.json().message,
      /^files\[0\]\.content: code is 101 bytes, over this deployment's limit of 100 bytes \(maxCodeBytes/
    )
    const unkeyed = await gw.inject({ method: 'POST', url: '/api/v2/execute', payload: body() })
    assert.equal(unkeyed.statusCode, 401)
    assert.deepEqual(Object.keys(unkeyed.json()), ['message'])
    const first = await gw.inject({ method: 'POST', url: '/api/v2/execute', headers, payload: body() })
    assert.equal(first.statusCode, 200, first.body)
    const refused = await gw.inject({ method: 'POST', url: '/api/v2/execute', headers, payload: body() })
    assert.equal(refused.statusCode, 429)
    assert.deepEqual(Object.keys(refused.json()), ['message'])
    assert.match(refused.json().message, /calls a second/)
    assert.match(String(refused.headers['retry-after']), /^\d+$/)
  } finally {
    await gw.close()
    await rm(dir, { recursive: true, force: true })
  }
})

test('Piston is its folder: no module of the gateway outside apis/ names a Piston route', () => {
  const src = fileURLToPath(new URL('../../../src/', import.meta.url))
  const outside = (readdirSync(src, { recursive: true }) as string[]).filter(
    (file) => file.endsWith('.ts') && !file.startsWith('apis')
  )
  assert.ok(outside.length > 10)
  for (const file of outside) assert.doesNotMatch(readFileSync(join(src, file), 'utf8'), /\/api\/v2\b|piston/i, file)
})
