/**
 * What tenants cost a request: the same `POST /v1/execute` through two gateway apps built side by
 * side (Fastify `inject`, a runner client that answers at once), one without API keys, one with
 * `--keys` keys whose tenants have in-flight and rate quotas (never reached): the difference is
 * the key lookup (SHA-256, then one constant-time compare per key), the request's child logger,
 * the quota's take and release and the tenant's counter. Rounds take turns; best round of each.
 * Only for side-by-side figures.
 * Usage: node --import tsx benchmarks/src/tenant-quota-cost.ts [--calls 20000] [--rounds 7] [--keys 1,10,100]
 * prints one JSON line: µs per request without keys and with each key count.
 */
import { parseArgs } from 'node:util'
import { buildGatewayApp, loadGatewayConfig, type GatewayApp, type RunnerClient } from '@sandfleet/gateway'
import { failedJudgeResult, type ExecResult, type RunnerLoad } from '@sandfleet/protocol'
import { gitCommit } from './environment.ts'

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '7' },
    keys: { type: 'string', default: '1,10,100' }
  }
})
const calls = Number(values.calls)
const rounds = Number(values.rounds)
const keyCounts = values.keys.split(',').map(Number)

const RESULT: ExecResult = {
  status: 'ok',
  stdout: '2\n',
  stderr: '',
  exit_code: 0,
  duration_ms: 0.05,
  queue_ms: 0,
  truncated: { stdout: false, stderr: false },
  error: null,
  files: {},
  runner: 'local',
  sandbox: 'instant-1'
}
const LOAD: RunnerLoad = {
  runner: 'local',
  state: 'ready',
  backend: 'process',
  languages: ['python'],
  capacity: 1024,
  in_flight: 0,
  queued: 0,
  queue_limit: 100_000,
  warm: 1024,
  busy: 0,
  sessions: 0
}
/** This bench judges nothing. */
const NO_JUDGE = failedJudgeResult('infra_error', 'python', 'SF_ERR_BENCH_NO_JUDGE', 'this fake runner judges nothing')
const client: RunnerClient = {
  name: 'local',
  execute: async () => ({ ...RESULT }),
  executeBatch: async (requests) => requests.map(() => ({ ...RESULT })),
  judge: async () => NO_JUDGE,
  judgeBatch: async (requests) => requests.map(() => NO_JUDGE),
  load: async () => LOAD,
  info: async () => ({
    runner: 'local',
    state: 'ready',
    backend: 'process',
    backend_reason: 'an instant fake runner',
    languages: ['python'],
    pool_size: 1024,
    isolation: {},
    environments: {},
    manifest: null
  }),
  close: async () => {}
}

const keyOf = (i: number): string => `sk-bench-${String(i).padStart(8, '0')}-0123456789abcdef`

async function app(keys: number): Promise<GatewayApp> {
  const apiKeys = Array.from({ length: keys }, (_, i) => keyOf(i))
  const config = loadGatewayConfig({
    env: {},
    values: { loadPollMs: 60_000, apiKeys, tenantMaxInFlight: 1_000_000, tenantRatePerSecond: 1e9 }
  })
  const gateway = await buildGatewayApp({ config, clients: [client], logger: false })
  await gateway.app.ready()
  return gateway
}

/** µs per request of `calls` sequential injects; the key presented is the last configured one. */
async function measure(gateway: GatewayApp, keys: number): Promise<number> {
  const headers = keys === 0 ? {} : { authorization: `Bearer ${keyOf(keys - 1)}` }
  const payload = { code: 'print(1+1)' }
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) {
    const res = await gateway.app.inject({ method: 'POST', url: '/v1/execute', headers, payload })
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${res.body}`)
  }
  return Number(process.hrtime.bigint() - started) / calls / 1000
}

const variants = [0, ...keyCounts]
const apps = await Promise.all(variants.map(app))
const best = variants.map(() => Infinity)
for (let r = 0; r < rounds; r++) {
  for (let v = 0; v < variants.length; v++) best[v] = Math.min(best[v], await measure(apps[v], variants[v]))
}
await Promise.all(
  apps.map(async (a) => {
    await a.app.close()
  })
)
const us = Object.fromEntries(variants.map((k, v) => [k === 0 ? 'noKeysUs' : `keys${k}Us`, Number(best[v].toFixed(2))]))
console.log(
  JSON.stringify({ date: new Date().toISOString(), commit: gitCommit(), node: process.version, calls, rounds, ...us })
)
