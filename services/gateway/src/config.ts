/**
 * The gateway's configuration: one schema with defaults and no unknown keys, read from explicit
 * values (CLI flags) over `SANDFLEET_*` environment variables over defaults, into a frozen object.
 */
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { GRACES, LIMITS, QUEUE_TIMEOUT_MS } from '@sandfleet/protocol'
import { configEnvName, configFlagName, schemaErrorMessage } from '@sandfleet/command-line'
import { GatewayError } from './errors.ts'

/** Schema of {@link GatewayConfig}. */
export const GatewayConfigSchema = Type.Object(
  {
    host: Type.String({ default: '127.0.0.1', description: 'Address to listen on' }),
    port: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: 8080,
      description: 'Port to listen on (0: any free port)'
    }),
    runners: Type.Array(Type.String({ pattern: '^https?://' }), {
      default: [],
      description: 'Runner base URLs (http://10.0.0.5:8081)'
    }),
    runnersDns: Type.String({
      default: '',
      pattern: '^(.+:[0-9]{1,5})?$',
      description:
        'host:port whose A/AAAA records are the runners (a headless Kubernetes service), re-resolved every dnsRefreshMs'
    }),
    dnsRefreshMs: Type.Integer({ minimum: 100, default: 5000 }),
    loadPollMs: Type.Integer({
      minimum: 20,
      default: 500,
      description: "How often each runner's /v1/runner/load is polled"
    }),
    runnerConnections: Type.Integer({ minimum: 1, default: 256, description: 'Keep-alive connections per runner' }),
    maxInFlight: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        'Calls admitted at once (a batch counts its items); past it 429. 0: as many as admissionMemoryMb holds at 32 KiB a call'
    }),
    admissionMemoryMb: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        "Memory the admitted calls may weigh (32 KiB a call plus its request body); past it 429. 0: a quarter of the memory the process may use (its cgroup limit, else the machine's), at most half of V8's heap limit"
    }),
    listenBacklog: Type.Integer({
      minimum: 1,
      default: 4096,
      description:
        "Connections the kernel queues before the gateway accepts them (capped by net.core.somaxconn); a step opening thousands at once needs more than Node's default 511"
    }),
    retryAfterS: Type.Integer({ minimum: 0, default: 1, description: 'Retry-After of a 429' }),
    maxAttempts: Type.Integer({
      minimum: 1,
      maximum: 10,
      default: 3,
      description: 'Runners tried for one call when they fail at the infrastructure level'
    }),
    queueTimeoutMs: Type.Integer({
      minimum: 0,
      maximum: LIMITS.maxTimeoutMs,
      default: QUEUE_TIMEOUT_MS,
      description:
        "Longest a call may wait for a sandbox, over all its attempts: each attempt tells the runner what is left (a runner's own queueTimeoutMs still caps it), and a call is retried on another runner only while some is left"
    }),
    callGraceMs: Type.Integer({
      minimum: 0,
      default: GRACES.callMs,
      description:
        "Beyond what is left of queueTimeoutMs plus timeout_ms, how long the gateway waits for a runner's answer (the runner's own grace, transport) before it counts the runner unreachable; it must be more than each runner's graceMs plus its backends' stop, or the gateway refuses the runner (at start-up, to start)"
    }),
    maxBodyBytes: Type.Integer({
      minimum: 1024,
      default: 32 * 1024 * 1024,
      description: 'Largest request body, in bytes; a larger one is refused with 413'
    }),
    maxCodeBytes: Type.Integer({
      minimum: 1,
      default: 1024 * 1024,
      description: 'Largest `code`, in UTF-8 bytes; a longer one is refused naming the field'
    }),
    maxTimeoutMs: Type.Integer({ minimum: LIMITS.minTimeoutMs, maximum: LIMITS.maxTimeoutMs, default: 300_000 }),
    maxMemoryMb: Type.Integer({ minimum: LIMITS.minMemoryMb, maximum: LIMITS.maxMemoryMb, default: 8192 }),
    maxBatchItems: Type.Integer({ minimum: 1, maximum: LIMITS.maxBatchItems, default: LIMITS.maxBatchItems }),
    maxSubBatchItems: Type.Integer({
      minimum: 1,
      maximum: LIMITS.maxBatchItems,
      default: 256,
      description: 'Most items of a batch sent to one runner in one request'
    }),
    codeJudgeTimeoutMs: Type.Integer({
      minimum: LIMITS.minTimeoutMs,
      maximum: LIMITS.maxTimeoutMs,
      default: 10_000,
      description:
        "timeout_ms of every code-judge submission (/run, /judge and their batches; code-judge's own default)"
    }),
    codeJudgeMemoryMb: Type.Integer({
      minimum: LIMITS.minMemoryMb,
      maximum: LIMITS.maxMemoryMb,
      default: 384,
      description: "memory_mb of every code-judge submission (code-judge's own default)"
    }),
    codeJudgeStdoutChars: Type.Integer({
      minimum: 0,
      default: 1000,
      description:
        "Longest stdout of a code-judge /run result, in characters (code-judge's own cut; the cut is said in stderr)"
    }),
    runnerSecret: Type.String({
      default: '',
      pattern: '^(.{16,})?$',
      description:
        "Shared secret of the fleet, sent to every runner as Authorization: Bearer SECRET (the runners' own runnerSecret); at least 16 characters; empty: none sent"
    }),
    apiKeys: Type.Array(Type.String({ minLength: 8, pattern: '^\\S+$' }), {
      default: [],
      description:
        'Accepted API keys (Authorization: Bearer KEY or x-api-key), each a tenant named key-1, key-2, … with the default quotas; none here or in apiKeysFile: no auth'
    }),
    apiKeysFile: Type.String({
      default: '',
      description:
        'A file of API keys, one a line: KEY [NAME] [maxInFlight=N] [ratePerSecond=R] (# comments); each a tenant with its own quotas (docs/SECURITY.md)'
    }),
    tenantMaxInFlight: Type.Integer({
      minimum: 0,
      default: 0,
      description:
        "Calls one API key may hold at once (a batch counts its items); past it 429. 0: no bound but the gateway's admission"
    }),
    tenantRatePerSecond: Type.Number({
      minimum: 0,
      default: 0,
      description:
        'Calls one API key may start a second (a token bucket holding one second of calls; a batch takes its items); past it 429 with Retry-After. 0: no bound'
    }),
    allowUnauthenticated: Type.Boolean({
      default: false,
      description:
        'Serve on a non-loopback host with no API key (anyone who reaches it may run code); without keys and without this, host must be a loopback address'
    }),
    logLevel: Type.Union(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
      { default: 'info' }
    )
  },
  { additionalProperties: false }
)

/** The gateway's settings, frozen. */
export type GatewayConfig = Readonly<Static<typeof GatewayConfigSchema>>

/** Where {@link loadGatewayConfig} reads from. */
export interface ConfigSources {
  /** Explicit values (CLI flags); they win over the environment. Strings are converted like env values. */
  values?: Record<string, unknown>
  /** Environment (default `process.env`); only `SANDFLEET_<KEY>` names of known keys are read. */
  env?: Record<string, string | undefined>
}

/** A flag's or variable's text as the schema's type; text that is no number stays text, so its error quotes it. */
function fromString(schema: { type?: unknown }, raw: string): unknown {
  if (schema.type === 'array')
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
  if (schema.type === 'integer' || schema.type === 'number')
    return /^\s*-?\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw
  if (schema.type === 'boolean') return /^(1|true|yes)$/i.test(raw) ? true : /^(0|false|no|)$/i.test(raw) ? false : raw
  return raw
}

/**
 * Builds the frozen config. Throws a {@link GatewayError} `SF_ERR_GATEWAY_CONFIG` whose message
 * lists every problem, one a line, each naming where the value came from (its flag or variable).
 */
export function loadGatewayConfig(sources: ConfigSources = {}): GatewayConfig {
  const env = sources.env ?? process.env
  const props = GatewayConfigSchema.properties as Record<string, { type?: unknown }>
  const raw: Record<string, unknown> = {}
  const origin: Record<string, string> = {}
  const problems: string[] = []
  for (const [key, schema] of Object.entries(props)) {
    const fromEnv = env[configEnvName(key)]
    if (fromEnv !== undefined) {
      raw[key] = fromString(schema, fromEnv)
      origin[key] = configEnvName(key)
    }
  }
  for (const [key, value] of Object.entries(sources.values ?? {})) {
    if (value === undefined) continue
    const schema = props[key]
    if (schema === undefined) {
      problems.push(`--${configFlagName(key)}: unknown flag`)
      continue
    }
    raw[key] = typeof value === 'string' ? fromString(schema, value) : value
    origin[key] = `--${configFlagName(key)}`
  }
  const config = Value.Default(GatewayConfigSchema, raw) as Record<string, unknown>
  for (const e of Value.Errors(GatewayConfigSchema, config)) {
    const key = e.path.slice(1).split('/')[0] ?? ''
    const where = `${e.path.slice(1) || '(root)'} (${origin[key] ?? `--${configFlagName(key)} or ${configEnvName(key)}`})`
    // a secret is never printed back
    const got =
      key === 'runnerSecret'
        ? `${String(e.value).length} characters, at least 16 needed`
        : key === 'apiKeys'
          ? typeof e.value === 'string'
            ? `a key of ${e.value.length} characters`
            : 'not a list of keys'
          : JSON.stringify(e.value)
    problems.push(`${where}: ${schemaErrorMessage(e)} (got ${got})`)
  }
  if (problems.length === 0) problems.push(...bindProblems(config as GatewayConfig, origin))
  if (problems.length > 0) {
    throw new GatewayError('SF_ERR_GATEWAY_CONFIG', `invalid gateway configuration:\n  - ${problems.join('\n  - ')}`)
  }
  // frozen copies: an array the caller passed in stays the caller's, unfrozen
  for (const [k, v] of Object.entries(config)) if (Array.isArray(v)) config[k] = Object.freeze([...v])
  return Object.freeze(config) as GatewayConfig
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(h)
}

/**
 * The bind rule: with no API key configured the gateway serves only on a loopback address,
 * unless `allowUnauthenticated` says to serve anyone who reaches it.
 */
function bindProblems(config: GatewayConfig, origin: Record<string, string>): string[] {
  if (
    isLoopbackHost(config.host) ||
    config.apiKeys.length > 0 ||
    config.apiKeysFile !== '' ||
    config.allowUnauthenticated
  )
    return []
  return [
    `host (${origin.host ?? '--host or SANDFLEET_HOST'}): ${JSON.stringify(config.host)} is not a loopback address and no API key is configured: ` +
      'set apiKeys (--api-keys, SANDFLEET_API_KEYS) or apiKeysFile (--api-keys-file, SANDFLEET_API_KEYS_FILE), ' +
      'or allowUnauthenticated (--allow-unauthenticated, SANDFLEET_ALLOW_UNAUTHENTICATED=true) to let anyone who reaches it run code'
  ]
}
