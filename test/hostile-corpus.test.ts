/**
 * The hostile corpus (test/hostile-corpus/cases.ts) on every Python backend: process
 * (bubblewrap), docker and pyodide, each a real runner behind a real gateway, all in parallel;
 * process and docker at each isolation level (`fork`, `reuse`: the runner's default there). For each case: a
 * well-behaved neighbour job runs at the same time and must print exactly its output; the hostile job must end in one
 * of the statuses its row names for the backend; then two probe jobs at once (one on each sandbox of the pool of two,
 * so on the one the case ran in) must find the sandbox as a fresh fleet was (test/hostile-corpus/probe.ts).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ISOLATION_LEVELS, type ExecResult, type IsolationLevel } from '@sandfleet/protocol'
import { post, startFleet, type TestFleet } from './helpers/fleet.ts'
import {
  CASES,
  CORPUS_BACKENDS,
  expectedStatuses,
  PTRACE_PROBE,
  type CorpusBackend,
  type CorpusContext
} from './hostile-corpus/cases.ts'
import { probe as probeCode } from './hostile-corpus/probe.ts'

const SECRET = `corpus-secret-${process.pid}-${Date.now()}`
// In the runner's own environment, where a sandbox that reached it would find it.
process.env.SANDFLEET_RUNNER_SECRET = SECRET

/** The neighbour: hashes for a while with pauses, so it is running while the hostile job does. */
const NEIGHBOUR =
  'import hashlib, time\nh = hashlib.sha256()\nfor i in range(30000):\n    h.update(b"%d," % i)\n    if i % 10000 == 0: time.sleep(0.05)\nprint(h.hexdigest())'
const NEIGHBOUR_OUT = `${createHash('sha256')
  .update(Array.from({ length: 30000 }, (_, i) => `${i},`).join(''))
  .digest('hex')}\n`

const RUNNER_OPTIONS: Record<CorpusBackend, Record<string, unknown>> = {
  process: { sandboxMemoryMb: 256 },
  // this checkout's executor, bound over the image's (the image on a shared engine may be another branch's)
  docker: {
    sandboxMemoryMb: 256,
    executorPath: fileURLToPath(new URL('../sandbox-images/python/executor.py', import.meta.url))
  },
  pyodide: {}
}

async function exec(fleet: TestFleet, body: Record<string, unknown>): Promise<ExecResult> {
  const { status, body: result } = await post(`${fleet.url}/v1/execute`, body)
  assert.equal(status, 200, JSON.stringify(result))
  return result
}

const HOST_MARKER = `sandfleet-corpus-marker-${process.pid}`
const accepted: Socket[] = []
const listener = createServer((s) => {
  accepted.push(s)
  s.end('hello')
})

/**
 * Each backend, and on those with isolation levels (process, docker) each level: a case's statuses and checks are the
 * same at both.
 */
interface CorpusRun {
  backend: CorpusBackend
  isolation?: IsolationLevel
}
const RUNS: CorpusRun[] = CORPUS_BACKENDS.flatMap((backend): CorpusRun[] =>
  backend === 'pyodide' ? [{ backend }] : ISOLATION_LEVELS.map((isolation) => ({ backend, isolation }))
)

test('the hostile corpus on every Python backend, at each isolation level', { timeout: 900_000 }, async (t) => {
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  const port = (listener.address() as { port: number }).port
  writeFileSync(join(tmpdir(), HOST_MARKER), 'host')
  try {
    await Promise.all(
      RUNS.map(async ({ backend, isolation }) => {
        const run = isolation === undefined ? backend : `${backend}, ${isolation}`
        await t.test(run, async (bt) => {
          const ctx: CorpusContext = {
            backend,
            port,
            accepted: () => accepted.length,
            secret: SECRET,
            hostMarker: HOST_MARKER
          }
          const fleet = await startFleet(
            [`corpus-${backend}-${isolation ?? ''}-${process.pid}`],
            // A reuse process holds privately what it touched of its zygote (tens of MiB on sym and sci): the sandbox
            // needs more room.
            {
              backend,
              languages: ['python'],
              poolSize: 2,
              graceMs: 2000,
              runnerSecret: SECRET,
              ...RUNNER_OPTIONS[backend],
              ...(isolation === undefined ? {} : { isolation }),
              ...(isolation === 'reuse' ? { sandboxMemoryMb: 512 } : {})
            },
            { runnerSecret: SECRET }
          )
          try {
            const PROBE = probeCode(isolation === 'reuse' ? 2 : 1)
            const probe = async (): Promise<ExecResult[]> =>
              await Promise.all([0, 1].map(async () => await exec(fleet, { code: PROBE, timeout_ms: 5000 })))
            const fresh = await probe()
            assert.deepEqual(
              fresh.map((p) => p.status),
              ['ok', 'ok'],
              JSON.stringify(fresh)
            )
            assert.equal(fresh[0].stdout, fresh[1].stdout)
            const baseline = fresh[0].stdout
            for (const c of CASES) {
              await bt.test(c.name, async () => {
                const code = typeof c.code === 'function' ? c.code(ctx) : c.code
                const [hostile, neighbour] = await Promise.all([
                  exec(fleet, {
                    code,
                    stdin: c.stdin,
                    timeout_ms:
                      c.timeoutMs ?? (expectedStatuses(c, backend, isolation).includes('timeout') ? 1000 : 10_000),
                    memory_mb: c.memoryMb ?? 128
                  }),
                  exec(fleet, { code: NEIGHBOUR, timeout_ms: 20_000 })
                ])
                const seen = JSON.stringify({
                  ...hostile,
                  stdout: hostile.stdout.slice(0, 300),
                  stderr: hostile.stderr.slice(-300)
                })
                assert.deepEqual(
                  [neighbour.status, neighbour.stdout, neighbour.stderr],
                  ['ok', NEIGHBOUR_OUT, ''],
                  `the neighbour of ${c.name}`
                )
                assert.ok(
                  expectedStatuses(c, backend, isolation).includes(hostile.status),
                  `${run}: ${c.name}: ${seen}`
                )
                if (hostile.status === 'infra_error')
                  assert.equal(hostile.error?.type, 'SF_ERR_RUNNER_REUSE_VIOLATION', seen)
                else
                  try {
                    c.check?.(hostile, ctx)
                  } catch (err) {
                    ;(err as Error).message = `${run}: ${c.name}: ${(err as Error).message}\n${seen}`
                    throw err
                  }
                const after = await probe()
                for (const p of after)
                  assert.deepEqual(
                    [p.status, p.stdout],
                    ['ok', baseline],
                    `${run}: after ${c.name}, on ${p.sandbox} (the case ran on ${hostile.sandbox}): ${p.stderr}`
                  )
              })
            }
            // Sessions: the session host (session_host.py) and its sessions outlive a cell. On docker and pyodide they
            // run under bubblewrap; on every backend no process a cell can see is attachable or readable.
            await bt.test(
              'a session cell can attach to no process (session host, session init, earlier cells)',
              async () => {
                const opened = await post(`${fleet.url}/v1/sessions`, { ttl_s: 30 })
                assert.equal(opened.status, 201, JSON.stringify(opened.body))
                const url = `${fleet.url}/v1/sessions/${encodeURIComponent(opened.body.session_id as string)}`
                try {
                  for (let i = 0; i < 2; i++) {
                    const { status, body } = await post(`${url}/execute`, {
                      code: `${PTRACE_PROBE}\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]) > 1)`,
                      timeout_ms: 10_000
                    })
                    assert.equal(status, 200, JSON.stringify(body))
                    assert.deepEqual(
                      [body.status, body.stdout],
                      ['ok', 'done\nTrue\n'],
                      `${run}: cell ${i}: ${JSON.stringify(body)}`
                    )
                  }
                } finally {
                  await fetch(url, { method: 'DELETE' })
                }
              }
            )
          } finally {
            await fleet.close()
          }
        })
      })
    )
  } finally {
    rmSync(join(tmpdir(), HOST_MARKER), { force: true })
    for (const s of accepted) s.destroy()
    listener.close()
  }
})
