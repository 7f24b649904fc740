import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadTenants, parseKeysFile, callerKeyOf } from '../../src/tenants/tenants.ts'

const DEFAULTS = { apiKeys: [] as string[], apiKeysFile: '', tenantMaxInFlight: 100, tenantRatePerSecond: 50 }

test('a keys file: key, optional name and limits; comments, blank lines, tabs; unnamed keys named by position', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-keys-'))
  try {
    const file = join(dir, 'keys')
    writeFileSync(
      file,
      '# KEY NAME maxInFlight=N ratePerSecond=R\n\nsk-trainer-0001  trainer  maxInFlight=4096\n  sk-agents-0002\tagents ratePerSecond=2.5 maxInFlight=8\nsk-bare-000003\n'
    )
    const tenants = loadTenants({ ...DEFAULTS, apiKeys: ['env-key-0001'], apiKeysFile: file })
    assert.deepEqual(
      tenants.map(([key, t]) => [key, t.name, t.maxInFlight, t.ratePerSecond]),
      [
        ['env-key-0001', 'key-1', 100, 50],
        ['sk-trainer-0001', 'trainer', 4096, 50],
        ['sk-agents-0002', 'agents', 8, 2.5],
        ['sk-bare-000003', 'key-4', 100, 50]
      ]
    )
    assert.equal(tenants[1][1].callerKey, callerKeyOf('sk-trainer-0001'))
    assert.match(tenants[1][1].callerKey, /^[0-9a-f]{32}$/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a bad keys file: every problem in one config error, each with its line, never the key', () => {
  const { problems } = parseKeysFile(
    'short\nsk-ok-00000001 bad/name\nsk-ok-00000002 a b\nsk-ok-00000003 maxInFlight=1.5 ratePerSecond=-1 burst=3\n',
    'keys'
  )
  assert.deepEqual(problems, [
    'keys:1: the key has 5 characters, at least 8 needed',
    'keys:2: name "bad/name" must be 1-64 of A-Z a-z 0-9 _ . -',
    'keys:3: a second name "b"',
    'keys:4: maxInFlight must be a whole number ≥ 0 (got "1.5")',
    'keys:4: ratePerSecond must be a number ≥ 0 (got "-1")',
    'keys:4: unknown option "burst" (maxInFlight=N, ratePerSecond=R)'
  ])
  const dir = mkdtempSync(join(tmpdir(), 'sf-keys-'))
  try {
    const file = join(dir, 'keys')
    writeFileSync(file, 'sk-dup-00000001 a\nsk-dup-00000001 b\nsk-other-000001 a\n')
    assert.throws(
      () => loadTenants({ ...DEFAULTS, apiKeysFile: file }),
      (err: Error & { code?: string }) =>
        err.code === 'SF_ERR_GATEWAY_CONFIG' &&
        /tenant name "a" is given to more than one key/.test(err.message) &&
        /1 API key\(s\) given more than once \(keys 2 in order\)/.test(err.message) &&
        !err.message.includes('sk-dup')
    )
    writeFileSync(file, '# only a comment\n')
    assert.throws(() => loadTenants({ ...DEFAULTS, apiKeysFile: file }), /apiKeysFile \(.*\): holds no key/)
    assert.throws(
      () => loadTenants({ ...DEFAULTS, apiKeysFile: join(dir, 'missing') }),
      /apiKeysFile \(.*missing\): cannot be read/
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
