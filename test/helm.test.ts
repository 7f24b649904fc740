/**
 * The Helm chart (helm/sandfleet), rendered by a real Helm 4: it lints, the default render is a
 * working topology (gateways find runners through the headless service, probes on /readyz and
 * /healthz, runners reachable from gateways only), bad values are refused by its strict schema,
 * and every object it renders, with every option on, is valid against the Kubernetes schemas
 * (and those of the KEDA and Prometheus Operator CRDs) with no unknown field.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { validateK8s } from './helpers/k8s-validate.ts'
// @ts-expect-error: a plain .mjs script shared with .ci/run
import { ensureHelm } from '../scripts/fetch-helm.mjs'

const CHART = fileURLToPath(new URL('../helm/sandfleet', import.meta.url))
/**
 * Without API keys the chart generates one unless told to serve without them (its own test below); most tests render
 * the open gateway.
 */
const OPEN = ['--set', 'gateway.allowUnauthenticated=true']
const helm = (ensureHelm as () => string)()

function run(...args: string[]): { status: number | null; out: string } {
  const r = spawnSync(helm, args, { encoding: 'utf8' })
  return { status: r.status, out: `${r.stdout}${r.stderr}` }
}

/** Renders the chart's objects, parsed. */
function renderObjects(...sets: string[]): Array<Record<string, any>> {
  const r = run('template', 'fleet', CHART, ...OPEN, '--namespace', 'rl', ...sets.flatMap((s) => ['--set', s]))
  assert.equal(r.status, 0, r.out)
  return parseAllDocuments(r.out)
    .map((d) => d.toJS() as Record<string, any> | null)
    .filter((d) => d !== null)
}

/** Renders the chart; one entry per object, as `kind/name` → its YAML text. */
function render(...sets: string[]): Map<string, string> {
  const r = run('template', 'fleet', CHART, ...OPEN, '--namespace', 'rl', ...sets.flatMap((s) => ['--set', s]))
  assert.equal(r.status, 0, r.out)
  assert.doesNotMatch(r.out, /cluster\.local/, 'no cluster domain is assumed')
  const objects = new Map<string, string>()
  for (const doc of r.out.split(/^---$/m)) {
    const kind = /^kind: (\S+)$/m.exec(doc)?.[1]
    const name = /^ {2}name: (\S+)$/m.exec(doc)?.[1]
    if (kind !== undefined && name !== undefined) objects.set(`${kind}/${name}`, doc)
  }
  return objects
}

test("helm lint passes, on the defaults with nothing to say but Chart.yaml's icon (no funcMap fail)", () => {
  const r = run('lint', CHART, ...OPEN, '--strict')
  assert.equal(r.status, 0, r.out)
  const defaults = run('lint', CHART)
  assert.equal(defaults.status, 0, defaults.out)
  assert.deepEqual(
    defaults.out.split('\n').filter((l) => /INFO|WARN|ERROR|fail/i.test(l) && !/0 chart\(s\) failed/.test(l)),
    ['[INFO] Chart.yaml: icon is recommended']
  )
})

test("the default render: gateways resolve the runners' headless service, probes, one runner per node, runners open to gateways only", () => {
  const o = render()
  assert.deepEqual([...o.keys()].sort(), [
    'DaemonSet/fleet-sandfleet-runner',
    'Deployment/fleet-sandfleet-gateway',
    'NetworkPolicy/fleet-sandfleet-runner',
    'PodDisruptionBudget/fleet-sandfleet-gateway',
    'Service/fleet-sandfleet',
    'Service/fleet-sandfleet-runner',
    'ServiceAccount/fleet-sandfleet'
  ])
  assert.match(o.get('ServiceAccount/fleet-sandfleet') ?? '', /automountServiceAccountToken: false/)
  const gateway = o.get('Deployment/fleet-sandfleet-gateway') ?? ''
  assert.match(gateway, /args: \["gateway"\]/)
  assert.match(
    gateway,
    /name: SANDFLEET_RUNNERS_DNS, value: "fleet-sandfleet-runner\.rl\.svc:8081"/,
    "the short name: the pod's resolver completes it"
  )
  assert.match(gateway, /path: \/readyz/)
  assert.match(gateway, /startupProbe:\n\s+httpGet: \{ path: \/healthz, port: http \}/)
  assert.match(gateway, /serviceAccountName: fleet-sandfleet\n\s+# [^\n]*\n\s+automountServiceAccountToken: false/)
  assert.match(gateway, /name: SANDFLEET_QUEUE_TIMEOUT_MS, value: "20000"/, "a call's queue budget")
  assert.match(gateway, /runAsUser: 65534/)
  assert.match(o.get('Service/fleet-sandfleet-runner') ?? '', /clusterIP: None/)
  const runner = o.get('DaemonSet/fleet-sandfleet-runner') ?? ''
  assert.match(runner, /args: \["runner"\]/)
  assert.match(
    runner,
    /name: SANDFLEET_ID\n\s+valueFrom:\n\s+fieldRef: \{ fieldPath: metadata\.name \}/,
    "each runner's id is its pod name"
  )
  assert.match(runner, /name: SANDFLEET_BACKEND, value: "process"/)
  assert.match(runner, /name: SANDFLEET_QUEUE_TIMEOUT_MS, value: "20000"/, "the runner's own cap on queueing")
  assert.match(runner, /seccompProfile:\n\s+type: Unconfined/, 'bubblewrap needs user namespaces')
  assert.match(runner, /procMount: Unmasked/, 'bubblewrap mounts a fresh /proc')
  assert.match(runner, /hostUsers: false/, "an unmasked /proc only in a user namespace of the pod's own")
  assert.match(runner, /automountServiceAccountToken: false/)
  assert.match(runner, /startupProbe:/)
  const policy = o.get('NetworkPolicy/fleet-sandfleet-runner') ?? ''
  assert.match(policy, /app\.kubernetes\.io\/component: gateway/)
  assert.match(policy, /egress: \[\]/)
})

test('values: runners as a Deployment, API keys from a Secret, a pool size; the schema refuses a bad backend', () => {
  const o = render('runner.kind=Deployment', 'runner.replicas=3', 'runner.poolSize=8')
  const runner = o.get('Deployment/fleet-sandfleet-runner') ?? ''
  assert.match(runner, /replicas: 3/)
  assert.match(runner, /name: SANDFLEET_POOL_SIZE, value: "8"/)
  const bad = run('template', 'fleet', CHART, ...OPEN, '--set', 'runner.backend=unsafe')
  assert.notEqual(bad.status, 0)
  assert.match(bad.out, /backend/)
})

test('the schema refuses unknown keys and wrong types at every level, naming the key', () => {
  const bad: Array<[string, RegExp]> = [
    ['replicaz=2', /additional properties 'replicaz' not allowed/],
    ['gateway.replicaz=2', /additional properties 'replicaz' not allowed/],
    ['gateway.autoscaling.maxReplica=3', /additional properties 'maxReplica' not allowed/],
    ['runner.startupProbe.period=3', /additional properties 'period' not allowed/],
    ['prometheusRule.errorRate=0.1', /additional properties 'errorRate' not allowed/],
    ['gateway.replicas=two', /\/gateway\/replicas': got string, want integer/],
    ['gateway.keda.enabled=yes', /\/gateway\/keda\/enabled': got string, want boolean/],
    ['runner.backend=unsafe', /\/runner\/backend': value must be one of/],
    ['runner.kind=StatefulSet', /\/runner\/kind': value must be one of/],
    ['clusterDomain=Cluster_Local', /\/clusterDomain'/],
    ['gateway.resources.requests.gpu=1', /additional properties 'gpu' not allowed/],
    ['prometheusRule.errorRatio=2', /\/prometheusRule\/errorRatio'/]
  ]
  for (const [set, message] of bad) {
    const r = run('template', 'fleet', CHART, ...OPEN, '--set', set)
    assert.notEqual(r.status, 0, `${set} was accepted`)
    assert.match(r.out, message, set)
  }
  const both = run(
    'template',
    'fleet',
    CHART,
    ...OPEN,
    '--set',
    'gateway.autoscaling.enabled=true',
    '--set',
    'gateway.keda.enabled=true'
  )
  assert.notEqual(both.status, 0)
  assert.match(both.out, /choose one/)
  const short = run('template', 'fleet', CHART, ...OPEN, '--set', 'runner.terminationGracePeriodSeconds=20')
  assert.notEqual(short.status, 0)
  assert.match(short.out, /must exceed runner\.drainTimeoutMs/)
})

/** Value sets that together render every template and every branch of the runner's security. */
const RENDERS: string[][] = [
  [],
  [
    'serviceMonitor.enabled=true',
    'prometheusRule.enabled=true',
    'grafanaDashboard.enabled=true',
    'gateway.autoscaling.enabled=true',
    'gateway.autoscaling.targetMemoryUtilizationPercentage=80',
    'runnerSecret.existingSecret=fleet-secret',
    'gateway.apiKeysSecret=fleet-keys',
    'clusterDomain=cluster.example'
  ],
  ['gateway.keda.enabled=true', 'runner.kind=Deployment', 'runner.backend=pyodide', 'serviceAccount.create=false'],
  ['runner.privileged=true', 'runner.backend=auto'],
  [
    'runner.backend=docker',
    'gateway.extraEnv[0].name=NODE_OPTIONS',
    'gateway.extraEnv[0].value=--max-old-space-size=900',
    'runner.tolerations[0].operator=Exists'
  ]
]

test('every rendered object is valid against the Kubernetes (and KEDA, Prometheus Operator) schemas, with no unknown field', async () => {
  const kinds = new Set<string>()
  for (const sets of RENDERS) {
    for (const object of renderObjects(...sets)) {
      kinds.add(object.kind)
      assert.deepEqual(await validateK8s(object), [], `${object.kind}/${object.metadata?.name} with ${sets.join(' ')}`)
    }
  }
  assert.deepEqual([...kinds].sort(), [
    'ConfigMap',
    'DaemonSet',
    'Deployment',
    'HorizontalPodAutoscaler',
    'NetworkPolicy',
    'PodDisruptionBudget',
    'PrometheusRule',
    'ScaledObject',
    'Service',
    'ServiceAccount',
    'ServiceMonitor'
  ])
  // The check itself: an unknown field anywhere, or a wrong type, is refused.
  const gateway = renderObjects().find((o) => o.kind === 'Deployment')
  assert.ok(gateway !== undefined)
  gateway.spec.template.spec.containers[0].startupProbe.periodSecond = 2
  gateway.spec.template.spec.automountServiceAccountToken = 'false'
  assert.deepEqual(await validateK8s(gateway), [
    '/spec/template/spec/automountServiceAccountToken: type {"type":"boolean"}',
    '/spec/template/spec/containers/0/startupProbe/periodSecond: not a field of Deployment'
  ])
})

test('Pod Security: gateways always meet restricted; pyodide runners meet restricted; process runners say privileged in NOTES', () => {
  const restricted = (pod: Record<string, any>, what: string): void => {
    assert.equal(pod.securityContext?.runAsNonRoot, true, what)
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault', what)
    assert.equal(pod.automountServiceAccountToken, false, what)
    for (const c of pod.containers) {
      assert.equal(c.securityContext.allowPrivilegeEscalation, false, what)
      assert.deepEqual(c.securityContext.capabilities.drop, ['ALL'], what)
      assert.equal(c.securityContext.privileged, undefined, what)
    }
    for (const v of pod.volumes ?? []) assert.equal(v.hostPath, undefined, what)
  }
  const pyodide = renderObjects('runner.backend=pyodide')
  restricted(pyodide.find((o) => o.kind === 'Deployment')?.spec.template.spec, 'gateway')
  restricted(pyodide.find((o) => o.kind === 'DaemonSet')?.spec.template.spec, 'pyodide runner')
  const notes = (backend: string): string =>
    run(
      'install',
      'fleet',
      CHART,
      ...OPEN,
      '--dry-run=client',
      '--namespace',
      'rl',
      '--set',
      `runner.backend=${backend}`
    ).out.split('NOTES:')[1] ?? ''
  assert.match(notes('pyodide'), /The runners, with backend pyodide, need "restricted"/)
  assert.match(
    notes('process'),
    /The runners, with backend process, need "privileged"[^\n]*\n\s+kubectl label namespace rl pod-security\.kubernetes\.io\/enforce=privileged/
  )
  for (const backend of ['process (bubblewrap)', 'auto', 'docker', 'pyodide', 'javascript', 'unsafe'])
    assert.match(notes('docker'), new RegExp(`^  ${backend.replace(/[()]/g, '\\$&')} +\\S`, 'm'), backend)
  const privileged = renderObjects('runner.privileged=true').find((o) => o.kind === 'DaemonSet')?.spec.template.spec
  assert.equal(privileged.containers[0].securityContext.privileged, true)
  assert.equal(privileged.hostUsers, undefined)
})

test("the shared secret reaches gateways and runners, and the runners' ServiceMonitor scrapes with it", () => {
  const o = renderObjects('runnerSecret.existingSecret=fleet-runner', 'serviceMonitor.enabled=true')
  for (const kind of ['Deployment', 'DaemonSet']) {
    const env = o.find((x) => x.kind === kind)?.spec.template.spec.containers[0].env as Array<Record<string, any>>
    assert.deepEqual(
      env.find((e) => e.name === 'SANDFLEET_RUNNER_SECRET')?.valueFrom,
      { secretKeyRef: { name: 'fleet-runner', key: 'runnerSecret' } },
      kind
    )
  }
  const monitors = o.filter((x) => x.kind === 'ServiceMonitor')
  assert.deepEqual(
    monitors.map((m) => [m.metadata.name, m.spec.endpoints[0].authorization?.credentials ?? null]),
    [
      ['fleet-sandfleet-gateway', null],
      ['fleet-sandfleet-runner', { name: 'fleet-runner', key: 'runnerSecret' }]
    ]
  )
  const lint = run(
    'lint',
    CHART,
    ...OPEN,
    '--strict',
    '--set',
    'runnerSecret.existingSecret=s,serviceMonitor.enabled=true,prometheusRule.enabled=true,grafanaDashboard.enabled=true,gateway.keda.enabled=true'
  )
  assert.equal(lint.status, 0, lint.out)
})

test('API keys: without a Secret of keys the chart generates one key, never an open gateway unless allowUnauthenticated; keys come as a file from a Secret', async () => {
  const env = (o: Array<Record<string, any>>): Record<string, string> =>
    Object.fromEntries(
      (
        o.find((x) => x.kind === 'Deployment')?.spec.template.spec.containers[0].env as Array<{
          name: string
          value?: string
        }>
      ).map((e) => [e.name, e.value ?? ''])
    )
  const generated = run('template', 'fleet', CHART, '--namespace', 'rl')
  assert.equal(generated.status, 0, generated.out)
  const defaults = parseAllDocuments(generated.out)
    .map((d) => d.toJS() as Record<string, any> | null)
    .filter((d) => d !== null)
  const secret = defaults.find((x) => x.kind === 'Secret')
  assert.equal(secret?.metadata.name, 'fleet-sandfleet-api-keys')
  assert.deepEqual(await validateK8s(secret!), [])
  assert.match(
    Buffer.from(secret!.data.apiKeys as string, 'base64').toString(),
    /^[A-Za-z0-9]{48} generated\n$/,
    'one key line of the keys file'
  )
  assert.equal(env(defaults).SANDFLEET_API_KEYS_FILE, '/etc/sandfleet/api-keys/apiKeys')
  assert.equal(env(defaults).SANDFLEET_ALLOW_UNAUTHENTICATED, undefined)
  assert.equal(
    defaults.find((x) => x.kind === 'Deployment')?.spec.template.spec.volumes.find((v: any) => v.name === 'api-keys')
      .secret.secretName,
    'fleet-sandfleet-api-keys'
  )
  const notes = run('install', 'fleet', CHART, '--namespace', 'rl', '--dry-run=client')
  assert.match(
    notes.out,
    /kubectl -n rl get secret fleet-sandfleet-api-keys -o jsonpath='\{\.data\.apiKeys\}' \| base64 -d \| cut -d' ' -f1/
  )
  const open = renderObjects()
  assert.equal(env(open).SANDFLEET_ALLOW_UNAUTHENTICATED, 'true')
  assert.equal(env(open).SANDFLEET_API_KEYS_FILE, undefined)
  assert.equal(
    open.find((x) => x.kind === 'Secret'),
    undefined,
    'an open gateway: no key made'
  )
  const r = run(
    'template',
    'fleet',
    CHART,
    '--namespace',
    'rl',
    '--set',
    'gateway.apiKeysSecret=fleet-keys',
    '--set',
    'gateway.tenantMaxInFlight=512',
    '--set-json',
    'gateway.tenantRatePerSecond=2.5'
  )
  assert.equal(r.status, 0, r.out)
  const keyed = parseAllDocuments(r.out)
    .map((d) => d.toJS() as Record<string, any> | null)
    .filter((d) => d !== null)
  assert.equal(
    keyed.find((x) => x.kind === 'Secret'),
    undefined,
    'the Secret given is used, none made'
  )
  const {
    SANDFLEET_API_KEYS_FILE: file,
    SANDFLEET_TENANT_MAX_IN_FLIGHT: inFlight,
    SANDFLEET_TENANT_RATE_PER_SECOND: rate
  } = env(keyed)
  assert.deepEqual([file, inFlight, rate], ['/etc/sandfleet/api-keys/apiKeys', '512', '2.5'])
  assert.equal(env(keyed).SANDFLEET_ALLOW_UNAUTHENTICATED, undefined, 'with keys the flag is never set')
  const pod = keyed.find((x) => x.kind === 'Deployment')?.spec.template.spec
  assert.deepEqual(
    pod.volumes.find((v: any) => v.name === 'api-keys'),
    {
      name: 'api-keys',
      secret: { secretName: 'fleet-keys', items: [{ key: 'apiKeys', path: 'apiKeys' }], defaultMode: 0o440 }
    }
  )
  assert.deepEqual(
    pod.containers[0].volumeMounts.find((m: any) => m.name === 'api-keys'),
    { name: 'api-keys', mountPath: '/etc/sandfleet/api-keys', readOnly: true }
  )
  assert.equal(pod.securityContext.fsGroup, 65534, "the gateway's group reads the keys file")
})
