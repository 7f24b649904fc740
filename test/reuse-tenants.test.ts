/**
 * Trust domains of the `reuse` level on a real gateway and runner (process backend, one sandbox
 * for two tenants): a process reused for several jobs runs jobs of one tenant only, whichever API
 * the calls come through (the native API and SandboxFusion's here): the tenant travels from the
 * gateway's key to the executor, which drops a reuse process before it takes another tenant's job.
 */
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { post, startFleet, type TestFleet } from './helpers/fleet.ts'

const KEYS = { a: 'sk-reuse-a-5e1f0c9d2b7a', b: 'sk-reuse-b-8a2c4e6f1d3b' }
const as = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })
const PID = 'import os\nprint(os.getpid())'

let dir: string
let fleet: TestFleet
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sf-reuse-tenants-'))
  const file = join(dir, 'api-keys')
  writeFileSync(file, `${KEYS.a}  a\n${KEYS.b}  b\n`, { mode: 0o600 })
  fleet = await startFleet(['reuse-tenants'], { poolSize: 1, isolation: 'reuse' }, { apiKeysFile: file })
})
after(async () => {
  await fleet?.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Run {
  tenant: 'a' | 'b'
  pid: string
  isolation: string
}

/** One call as `tenant`: through /v1/execute, or SandboxFusion's /run_code (which says no level: the pid alone). */
async function call(tenant: 'a' | 'b', compat: boolean): Promise<Run> {
  if (compat) {
    const r = await post(`${fleet.url}/run_code`, { code: PID, language: 'python' }, as(KEYS[tenant]))
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return { tenant, pid: String(r.body.run_result.stdout).trim(), isolation: 'unknown' }
  }
  const r = await post(`${fleet.url}/v1/execute`, { code: PID, isolation: 'reuse' }, as(KEYS[tenant]))
  assert.deepEqual([r.status, r.body.status], [200, 'ok'], JSON.stringify(r.body))
  return { tenant, pid: String(r.body.stdout).trim(), isolation: r.body.isolation }
}

test('reuse: two tenants on one sandbox never share a reused process, through the native and a compatible API', async () => {
  const runs: Run[] = []
  for (let round = 0; round < 4; round++) {
    for (const tenant of ['a', 'b'] as const) {
      for (let i = 0; i < 4; i++) runs.push(await call(tenant, i === 3))
    }
  }
  const owners = new Map<string, Set<string>>()
  for (const r of runs) {
    const set = owners.get(r.pid) ?? new Set<string>()
    set.add(r.tenant)
    owners.set(r.pid, set)
  }
  const shared = [...owners].filter(([, tenants]) => tenants.size > 1)
  assert.deepEqual(shared, [], 'a process ran jobs of two tenants')
  for (const tenant of ['a', 'b']) {
    const reused = runs.filter((r) => r.tenant === tenant && r.isolation === 'reuse')
    assert.ok(reused.length >= 2, `tenant ${tenant} ran reused: ${JSON.stringify(runs)}`)
    assert.ok(
      new Set(reused.map((r) => r.pid)).size < reused.length,
      `some process of tenant ${tenant} took more than one of its jobs`
    )
  }
})
