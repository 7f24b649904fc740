/**
 * What the gateway's per-route request metrics cost a request: `GatewayMetrics.observeRequest`
 * (label children cached per route, method and status) against the same two updates through
 * prom-client's labelled calls (`counter.inc(labels)`, `histogram.observe(labels, v)`), taking
 * turns, over a mix of routes and status codes. Only for side-by-side figures.
 * Usage: node --import tsx benchmarks/src/request-metrics-cost.ts [--calls 2000000] [--rounds 5];
 * prints one JSON line: ns per request for each path, best round of each.
 */
import { parseArgs } from 'node:util'
import { GatewayMetrics, type RunnerSet } from '@sandfleet/gateway'
import { gitCommit } from './environment.ts'

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '5' } }
})
const calls = Number(values.calls)
const rounds = Number(values.rounds)
const ROUTES = [
  ['/v1/execute', 'POST', 200],
  ['/v1/execute', 'POST', 400],
  ['/v1/execute/batch', 'POST', 200],
  ['/v1/sessions/:id', 'GET', 404],
  ['/healthz', 'GET', 200],
  ['unmatched', 'GET', 404]
] as const
// The collect callbacks read the runner set only when scraped: none here.
const metrics = new GatewayMetrics({ members: [] } as unknown as RunnerSet)

function cached(): number {
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) {
    const [route, method, status] = ROUTES[i % ROUTES.length]
    metrics.observeRequest(route, method, status, 0.0004)
  }
  return Number(process.hrtime.bigint() - started) / calls
}

function labelled(): number {
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) {
    const [route, method, status] = ROUTES[i % ROUTES.length]
    metrics.httpRequests.inc({ route, method, status_code: String(status) })
    metrics.httpDuration.observe({ route, method }, 0.0004)
  }
  return Number(process.hrtime.bigint() - started) / calls
}

const best = { cachedNs: Infinity, labelledNs: Infinity }
for (let r = 0; r < rounds; r++) {
  best.cachedNs = Math.min(best.cachedNs, cached())
  best.labelledNs = Math.min(best.labelledNs, labelled())
}
console.log(
  JSON.stringify({
    date: new Date().toISOString(),
    commit: gitCommit(),
    node: process.version,
    calls,
    rounds,
    cachedNs: Number(best.cachedNs.toFixed(1)),
    labelledNs: Number(best.labelledNs.toFixed(1))
  })
)
