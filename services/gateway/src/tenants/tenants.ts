/**
 * Tenants: every API key is a tenant with a name (a log field and a metric label) and its own
 * quotas. Keys come from `apiKeys` (flags, `SANDFLEET_API_KEYS`: named key-1, key-2, … by
 * position, default quotas) and from `apiKeysFile`, one key a line:
 *
 * ```text
 * # KEY                          [NAME]    [maxInFlight=N] [ratePerSecond=R]
 * sk-trainer-6f1c0c2f8e9a4b7d    trainer   maxInFlight=4096
 * sk-agents-0b5d3e8a1c7f9e2a     agents    maxInFlight=64   ratePerSecond=20
 * sk-9d8c7b6a5f4e3d2c
 * ```
 *
 * Fields are separated by spaces or tabs; blank lines and lines starting with `#` are skipped. A
 * key has at least 8 characters and no white space; a name is 1–64 of `A-Z a-z 0-9 _ . -`
 * (unnamed: key-N, N its position among all keys); limits not given are `tenantMaxInFlight` and
 * `tenantRatePerSecond`. Keys and names are unique.
 */
import { readFileSync } from 'node:fs'
import type { GatewayConfig } from '../config.ts'
import { GatewayError } from '../errors.ts'
import { sha256 } from './key-table.ts'

/** One API key's tenant (the key itself is not kept here). */
export interface Tenant {
  /** Its name in logs and metric labels. */
  readonly name: string
  /** Calls it may hold at once; 0: no bound. */
  readonly maxInFlight: number
  /** Calls it may start a second; 0: no bound. */
  readonly ratePerSecond: number
  /** What identifies it to the runners (sessions bound to a key): a digest of its key, never the key. */
  readonly callerKey: string
}

/** A line of a keys file, read. */
export interface KeyLine {
  key: string
  name?: string
  maxInFlight?: number
  ratePerSecond?: number
}

const NAME = /^[A-Za-z0-9_.-]{1,64}$/
const MIN_KEY_CHARS = 8

/** What identifies a key to the runners: the first 32 hex digits of its SHA-256. */
export function callerKeyOf(key: string): string {
  return sha256(key).toString('hex').slice(0, 32)
}

/** Reads a keys file's text; `source` names it in problems (`FILE:LINE`). */
export function parseKeysFile(text: string, source: string): { lines: KeyLine[]; problems: string[] } {
  const lines: KeyLine[] = []
  const problems: string[] = []
  text.split(/\r?\n/).forEach((raw, i) => {
    const fields = raw.trim().split(/[ \t]+/)
    const key = fields[0]
    if (key === '' || key.startsWith('#')) return
    const where = `${source}:${i + 1}`
    // the key is never printed back
    if (key.length < MIN_KEY_CHARS)
      problems.push(`${where}: the key has ${key.length} characters, at least ${MIN_KEY_CHARS} needed`)
    const line: KeyLine = { key }
    for (const field of fields.slice(1)) {
      const [option, value, extra] = field.split('=')
      if (value === undefined) {
        if (line.name !== undefined) problems.push(`${where}: a second name ${JSON.stringify(field)}`)
        else if (!NAME.test(field))
          problems.push(`${where}: name ${JSON.stringify(field)} must be 1-64 of A-Z a-z 0-9 _ . -`)
        else line.name = field
        continue
      }
      const n = /^\d+(\.\d+)?$/.test(value) && extra === undefined ? Number(value) : NaN
      if (option === 'maxInFlight' && Number.isInteger(n)) line.maxInFlight = n
      else if (option === 'ratePerSecond' && Number.isFinite(n)) line.ratePerSecond = n
      else if (option === 'maxInFlight' || option === 'ratePerSecond')
        problems.push(
          `${where}: ${option} must be ${option === 'maxInFlight' ? 'a whole number' : 'a number'} ≥ 0 (got ${JSON.stringify(value)})`
        )
      else problems.push(`${where}: unknown option ${JSON.stringify(option)} (maxInFlight=N, ratePerSecond=R)`)
    }
    lines.push(line)
  })
  return { lines, problems }
}

/**
 * The configured keys with their tenants: `apiKeys`, then the lines of `apiKeysFile` (read now).
 * Throws `SF_ERR_GATEWAY_CONFIG` listing every problem: an unreadable or empty file, a bad line,
 * a key or name given twice.
 */
export function loadTenants(
  config: Pick<GatewayConfig, 'apiKeys' | 'apiKeysFile' | 'tenantMaxInFlight' | 'tenantRatePerSecond'>
): Array<[key: string, tenant: Tenant]> {
  const lines: KeyLine[] = config.apiKeys.map((key) => ({ key }))
  const problems: string[] = []
  if (config.apiKeysFile !== '') {
    let text = ''
    try {
      text = readFileSync(config.apiKeysFile, 'utf8')
    } catch (err) {
      problems.push(`apiKeysFile (${config.apiKeysFile}): cannot be read: ${(err as Error).message}`)
    }
    const read = parseKeysFile(text, `apiKeysFile ${config.apiKeysFile}`)
    problems.push(...read.problems)
    if (problems.length === 0 && read.lines.length === 0)
      problems.push(`apiKeysFile (${config.apiKeysFile}): holds no key`)
    lines.push(...read.lines)
  }
  const tenants: Array<[string, Tenant]> = lines.map((line, i) => [
    line.key,
    {
      name: line.name ?? `key-${i + 1}`,
      maxInFlight: line.maxInFlight ?? config.tenantMaxInFlight,
      ratePerSecond: line.ratePerSecond ?? config.tenantRatePerSecond,
      callerKey: callerKeyOf(line.key)
    }
  ])
  const names = tenants.map(([, t]) => t.name)
  const keys = tenants.map(([k]) => k)
  for (const name of new Set(names.filter((n, i) => names.indexOf(n) !== i)))
    problems.push(`tenant name ${JSON.stringify(name)} is given to more than one key`)
  const twice = keys.filter((k, i) => keys.indexOf(k) !== i).length
  if (twice > 0)
    problems.push(
      `${twice} API key(s) given more than once (keys ${keys.flatMap((k, i) => (keys.indexOf(k) !== i ? [i + 1] : [])).join(', ')} in order)`
    )
  if (problems.length > 0)
    throw new GatewayError('SF_ERR_GATEWAY_CONFIG', `invalid gateway configuration:\n  - ${problems.join('\n  - ')}`)
  return tenants
}
