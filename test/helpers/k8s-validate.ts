/**
 * Validates Kubernetes objects against the API's schemas, strictly: the validators are those
 * kubernetes-models generates from the Kubernetes OpenAPI document (and, for the CRDs this chart
 * renders, @kubernetes-models/keda and @kubernetes-models/prometheus-operator from theirs). They
 * check types, enums, formats and required fields but let unknown fields through, as the API's
 * schemas do not say `additionalProperties: false`. So the object is handed to them behind
 * proxies that record every property they read: a generated validator reads each property its
 * schema names and, for a map (`labels`, `additionalProperties: {...}`), every key; a property
 * of the object that no validator read is one the schema does not know, and is refused.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** A generated validator: true when valid, its errors on itself otherwise. */
type Validate = ((data: unknown) => boolean) & {
  errors?: Array<{ instancePath: string; message?: string; keyword: string; params: unknown }> | null
}

const require = createRequire(import.meta.url)

/** `apiVersion/kind` → [package, schema module]. */
const SCHEMAS: Record<string, [string, string]> = {
  'v1/Service': ['kubernetes-models', 'IoK8sApiCoreV1Service'],
  'v1/ServiceAccount': ['kubernetes-models', 'IoK8sApiCoreV1ServiceAccount'],
  'v1/ConfigMap': ['kubernetes-models', 'IoK8sApiCoreV1ConfigMap'],
  'v1/Secret': ['kubernetes-models', 'IoK8sApiCoreV1Secret'],
  'apps/v1/Deployment': ['kubernetes-models', 'IoK8sApiAppsV1Deployment'],
  'apps/v1/DaemonSet': ['kubernetes-models', 'IoK8sApiAppsV1DaemonSet'],
  'policy/v1/PodDisruptionBudget': ['kubernetes-models', 'IoK8sApiPolicyV1PodDisruptionBudget'],
  'networking.k8s.io/v1/NetworkPolicy': ['kubernetes-models', 'IoK8sApiNetworkingV1NetworkPolicy'],
  'autoscaling/v2/HorizontalPodAutoscaler': ['kubernetes-models', 'IoK8sApiAutoscalingV2HorizontalPodAutoscaler'],
  'keda.sh/v1alpha1/ScaledObject': ['@kubernetes-models/keda', 'KedaShV1alpha1ScaledObject'],
  'monitoring.coreos.com/v1/ServiceMonitor': [
    '@kubernetes-models/prometheus-operator',
    'MonitoringCoreosComV1ServiceMonitor'
  ],
  'monitoring.coreos.com/v1/PrometheusRule': [
    '@kubernetes-models/prometheus-operator',
    'MonitoringCoreosComV1PrometheusRule'
  ]
}

const loaded = new Map<string, Validate>()

async function validatorOf(key: string): Promise<Validate> {
  const known = loaded.get(key)
  if (known !== undefined) return known
  const entry = SCHEMAS[key]
  if (entry === undefined) throw new Error(`no schema for ${key}: add it to test/helpers/k8s-validate.ts`)
  // The CRD packages do not export their _schemas: loaded by file (the package's own imports resolve as usual).
  const root = dirname(require.resolve(`${entry[0]}/package.json`))
  const validate = (
    (await import(pathToFileURL(join(root, '_schemas', `${entry[1]}.js`)).href)) as { validate: Validate }
  ).validate
  loaded.set(key, validate)
  return validate
}

/** `value` behind proxies that add to `read` the path of every property a reader gets or enumerates. */
function watched(value: unknown, path: string, read: Set<string>): unknown {
  if (value === null || typeof value !== 'object') return value
  const cache = new Map<PropertyKey, unknown>()
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key !== 'string') return Reflect.get(target, key, receiver)
      if (!Object.hasOwn(target, key)) return Reflect.get(target, key, receiver)
      read.add(`${path}/${key}`)
      if (!cache.has(key)) cache.set(key, watched((target as Record<string, unknown>)[key], `${path}/${key}`, read))
      return cache.get(key)
    }
  })
}

/** Every path of a property in `value` (array indexes included). */
function paths(value: unknown, path: string, out: string[]): string[] {
  if (value === null || typeof value !== 'object') return out
  for (const [key, child] of Object.entries(value)) {
    out.push(`${path}/${key}`)
    paths(child, `${path}/${key}`, out)
  }
  return out
}

/** The problems of one object: schema errors, then fields its schema does not know. Empty: valid. */
export async function validateK8s(object: { apiVersion?: unknown; kind?: unknown }): Promise<string[]> {
  const validate = await validatorOf(`${String(object.apiVersion)}/${String(object.kind)}`)
  const read = new Set<string>()
  const problems: string[] = []
  if (!validate(watched(object, '', read))) {
    for (const e of validate.errors ?? [])
      problems.push(`${e.instancePath || '/'}: ${e.keyword} ${JSON.stringify(e.params)}`)
  }
  // An array's elements are read by index: an element counts as read with its array.
  for (const p of paths(object, '', [])) {
    if (!read.has(p) && !/\/\d+$/.test(p)) problems.push(`${p}: not a field of ${String(object.kind)}`)
  }
  return problems
}
