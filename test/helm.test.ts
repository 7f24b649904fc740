/**
 * The Helm chart (helm/sandfleet), rendered by a real Helm 4: it lints, the default render is a
 * working topology (gateways find runners through the headless service, probes on /readyz and
 * /healthz, runners reachable from gateways only), and bad values are refused by its schema.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
// @ts-expect-error: a plain .mjs script shared with .ci/run
import { ensureHelm } from '../scripts/fetch-helm.mjs'

const CHART = fileURLToPath(new URL('../helm/sandfleet', import.meta.url))
const helm = (ensureHelm as () => string)()

function run (...args: string[]): { status: number | null, out: string } {
  const r = spawnSync(helm, args, { encoding: 'utf8' })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

/** Renders the chart; one entry per object, as `kind/name` → its YAML text. */
function render (...sets: string[]): Map<string, string> {
  const r = run('template', 'fleet', CHART, '--namespace', 'rl', ...sets.flatMap((s) => ['--set', s]))
  assert.equal(r.status, 0, r.out)
  const objects = new Map<string, string>()
  for (const doc of r.out.split(/^---$/m)) {
    const kind = /^kind: (\S+)$/m.exec(doc)?.[1]
    const name = /^ {2}name: (\S+)$/m.exec(doc)?.[1]
    if (kind !== undefined && name !== undefined) objects.set(`${kind}/${name}`, doc)
  }
  return objects
}

test('helm lint passes', () => {
  const r = run('lint', CHART, '--strict')
  assert.equal(r.status, 0, r.out)
})

test('the default render: gateways resolve the runners\' headless service, probes, one runner per node, runners open to gateways only', () => {
  const o = render()
  assert.deepEqual([...o.keys()].sort(), [
    'DaemonSet/fleet-sandfleet-runner', 'Deployment/fleet-sandfleet-gateway', 'NetworkPolicy/fleet-sandfleet-runner',
    'PodDisruptionBudget/fleet-sandfleet-gateway', 'Service/fleet-sandfleet', 'Service/fleet-sandfleet-runner'
  ])
  const gateway = o.get('Deployment/fleet-sandfleet-gateway') ?? ''
  assert.match(gateway, /args: \["gateway"\]/)
  assert.match(gateway, /name: SANDFLEET_RUNNERS_DNS, value: "fleet-sandfleet-runner\.rl\.svc\.cluster\.local:8081"/)
  assert.match(gateway, /path: \/readyz/)
  assert.match(gateway, /name: SANDFLEET_QUEUE_TIMEOUT_MS, value: "20000"/, 'a call\'s queue budget')
  assert.match(gateway, /runAsUser: 65534/)
  assert.match(o.get('Service/fleet-sandfleet-runner') ?? '', /clusterIP: None/)
  const runner = o.get('DaemonSet/fleet-sandfleet-runner') ?? ''
  assert.match(runner, /args: \["runner"\]/)
  assert.match(runner, /name: SANDFLEET_ID\n\s+valueFrom:\n\s+fieldRef: \{ fieldPath: metadata\.name \}/, 'each runner\'s id is its pod name')
  assert.match(runner, /name: SANDFLEET_BACKEND, value: "process"/)
  assert.match(runner, /name: SANDFLEET_QUEUE_TIMEOUT_MS, value: "30000"/, 'the runner\'s own cap on queueing')
  assert.match(runner, /seccompProfile:\n\s+type: Unconfined/, 'bubblewrap needs user namespaces')
  const policy = o.get('NetworkPolicy/fleet-sandfleet-runner') ?? ''
  assert.match(policy, /app\.kubernetes\.io\/component: gateway/)
  assert.match(policy, /egress: \[\]/)
})

test('values: runners as a Deployment, API keys from a Secret, a pool size; the schema refuses a bad backend', () => {
  const o = render('runner.kind=Deployment', 'runner.replicas=3', 'gateway.apiKeysSecret=fleet-keys', 'runner.poolSize=8')
  const runner = o.get('Deployment/fleet-sandfleet-runner') ?? ''
  assert.match(runner, /replicas: 3/)
  assert.match(runner, /name: SANDFLEET_POOL_SIZE, value: "8"/)
  assert.match(o.get('Deployment/fleet-sandfleet-gateway') ?? '', /name: SANDFLEET_API_KEYS\n\s+valueFrom:\n\s+secretKeyRef: \{ name: "fleet-keys", key: apiKeys \}/)
  const bad = run('template', 'fleet', CHART, '--set', 'runner.backend=unsafe')
  assert.notEqual(bad.status, 0)
  assert.match(bad.out, /backend/)
})
