/**
 * What a real fleet (a runner with real sandboxes, a gateway over HTTP) exports after real
 * requests: per-route request metrics by route template, method and status code, the build info
 * and the default process/Node.js metrics on both services, every name under `sandfleet_`; and
 * the chart's alerts, dashboard and KEDA query name only metrics the fleet exports.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
// @ts-expect-error: a plain .mjs script shared with .ci/run
import { ensureHelm } from '../scripts/fetch-helm.mjs'
import { startFleet, call, post } from './helpers/fleet.ts'
import { familyNames, find, one, parseExposition } from './helpers/prometheus.ts'

test('after real requests the gateway counts them by route template, method and status code, times them, and both services export build info and the process defaults', async () => {
  const fleet = await startFleet(['r1'], { poolSize: 1 })
  try {
    assert.equal((await post(`${fleet.url}/v1/execute`, { code: 'print(6*7)' })).body.stdout, '42\n')
    assert.equal((await post(`${fleet.url}/v1/execute`, { cod: 'print(1)' })).status, 400)
    assert.equal(
      (await post(`${fleet.url}/v1/execute/batch`, { requests: [{ code: 'print(1)' }, { code: 'print(2)' }] })).status,
      200
    )
    assert.equal((await call('GET', `${fleet.url}/v1/sessions/no-such-session`)).status, 404)
    assert.equal((await call('GET', `${fleet.url}/no/such/path?x=1`)).status, 404)
    const text = await (await fetch(`${fleet.url}/metrics`)).text()
    const samples = parseExposition(text)
    const requests = (route: string, method: string, status: string): number =>
      one(samples, 'sandfleet_gateway_http_requests_total', { route, method, status_code: status }).value
    assert.equal(requests('/v1/execute', 'POST', '200'), 1)
    assert.equal(requests('/v1/execute', 'POST', '400'), 1, 'a refused body counts under its route')
    assert.equal(requests('/v1/execute/batch', 'POST', '200'), 1)
    assert.equal(requests('/v1/sessions/:id', 'GET', '404'), 1, 'the template, not the id')
    assert.equal(requests('unmatched', 'GET', '404'), 1, 'an unknown path is one series, never its URL')
    assert.equal(
      find(samples, 'sandfleet_gateway_http_requests_total').filter((s) => /no-such|no\/such/.test(s.labels.route))
        .length,
      0
    )
    const count = one(samples, 'sandfleet_gateway_http_request_duration_seconds_count', {
      route: '/v1/execute',
      method: 'POST'
    })
    assert.equal(count.value, 2)
    assert.equal(
      one(samples, 'sandfleet_gateway_http_request_duration_seconds_bucket', {
        route: '/v1/execute',
        method: 'POST',
        le: '+Inf'
      }).value,
      2
    )
    assert.ok(
      one(samples, 'sandfleet_gateway_http_request_duration_seconds_sum', { route: '/v1/execute', method: 'POST' })
        .value > 0
    )

    assert.ok(one(samples, 'sandfleet_gateway_admission_limit').value >= 1, "admission's limit, by count")
    assert.ok(one(samples, 'sandfleet_gateway_admission_limit_bytes').value > 0, 'and by memory')
    assert.equal(one(samples, 'sandfleet_gateway_admitted_bytes').value, 0, 'nothing held between calls')
    const build = one(samples, 'sandfleet_build_info', { component: 'gateway' })
    assert.equal(build.value, 1)
    assert.equal(build.labels.version, '0.1.0')
    assert.equal(build.labels.node_version, process.version)
    assert.match(build.labels.commit, /^([0-9a-f]{40}|unknown)$/)
    for (const name of [
      'sandfleet_process_cpu_seconds_total',
      'sandfleet_process_resident_memory_bytes',
      'sandfleet_nodejs_eventloop_lag_seconds',
      'sandfleet_nodejs_heap_size_used_bytes'
    ]) {
      assert.ok(one(samples, name).value >= 0, name)
    }
    for (const name of familyNames(text)) assert.match(name, /^sandfleet_/)

    const runnerText = await (await fetch(`${fleet.runners[0].url}/metrics`)).text()
    const runner = parseExposition(runnerText)
    assert.equal(one(runner, 'sandfleet_build_info', { component: 'runner', runner: 'r1', version: '0.1.0' }).value, 1)
    assert.ok(one(runner, 'sandfleet_process_resident_memory_bytes', { runner: 'r1' }).value > 0)
    assert.equal(
      one(runner, 'sandfleet_runner_executions_total', {
        runner: 'r1',
        status: 'ok',
        language: 'python',
        backend: 'process'
      }).value,
      3
    )
    for (const name of familyNames(runnerText)) assert.match(name, /^sandfleet_/)

    // What the chart's PrometheusRule, dashboard and ScaledObject read.
    const exported = new Set<string>()
    for (const name of [...familyNames(text), ...familyNames(runnerText)]) {
      for (const suffix of ['', '_bucket', '_sum', '_count']) exported.add(name + suffix)
    }
    const used = chartMetricNames()
    assert.ok(used.size >= 20, `the chart reads ${used.size} metrics`)
    assert.deepEqual(
      [...used].filter((name) => !exported.has(name)),
      [],
      'names the chart reads that no service exports'
    )
  } finally {
    await fleet.close()
  }
})

/** Every `sandfleet_*` name in the expressions of the chart's alerts, dashboard and KEDA trigger. */
function chartMetricNames(): Set<string> {
  const chart = fileURLToPath(new URL('../helm/sandfleet', import.meta.url))
  const r = spawnSync(
    (ensureHelm as () => string)(),
    [
      'template',
      'fleet',
      chart,
      '--set',
      'gateway.allowUnauthenticated=true',
      '--set',
      'prometheusRule.enabled=true',
      '--set',
      'grafanaDashboard.enabled=true',
      '--set',
      'gateway.keda.enabled=true'
    ],
    { encoding: 'utf8' }
  )
  assert.equal(r.status, 0, r.stderr)
  const expressions: string[] = []
  for (const doc of parseAllDocuments(r.stdout)) {
    const o = doc.toJS() as Record<string, any> | null
    if (o?.kind === 'PrometheusRule')
      for (const g of o.spec.groups) for (const rule of g.rules) expressions.push(rule.expr)
    if (o?.kind === 'ScaledObject') for (const t of o.spec.triggers) expressions.push(t.metadata.query)
    if (o?.kind === 'ConfigMap') {
      const dashboard = JSON.parse(o.data['sandfleet.json'])
      for (const panel of dashboard.panels) for (const target of panel.targets ?? []) expressions.push(target.expr)
      for (const variable of dashboard.templating.list)
        if (typeof variable.definition === 'string') expressions.push(variable.definition)
    }
  }
  assert.ok(expressions.length > 30, `${expressions.length} expressions`)
  return new Set(expressions.flatMap((e) => e.match(/\bsandfleet_[a-z0-9_]+/g) ?? []))
}
