import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadGatewayConfig } from '../src/config.ts'
import { GatewayError } from '../src/errors.ts'

test("defaults, then SANDFLEET_* variables, then flags: the later source wins, text becomes the schema's type", () => {
  assert.equal(loadGatewayConfig({ env: {} }).maxInFlight, 0, 'no count bound by default: admission is sized by memory')
  const config = loadGatewayConfig({
    env: {
      SANDFLEET_MAX_IN_FLIGHT: '64',
      SANDFLEET_RUNNERS: 'http://10.0.0.5:8081, http://10.0.0.6:8081',
      SANDFLEET_PORT: '9000'
    },
    values: { port: '9001' }
  })
  assert.equal(config.maxInFlight, 64)
  assert.deepEqual(config.runners, ['http://10.0.0.5:8081', 'http://10.0.0.6:8081'])
  assert.equal(config.port, 9001)
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.runners))
})

test('every problem in one error, each naming the flag or variable it came from and quoting the value', () => {
  let error: unknown
  try {
    loadGatewayConfig({ env: { SANDFLEET_PORT: 'x' }, values: { maxInFlight: 'abc', runners: 'ftp://x', bogus: '1' } })
  } catch (e) {
    error = e
  }
  assert.ok(error instanceof GatewayError)
  assert.equal(error.code, 'SF_ERR_GATEWAY_CONFIG')
  const lines = error.message
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
  assert.deepEqual(lines.sort(), [
    '- --bogus: unknown flag',
    '- maxInFlight (--max-in-flight): Expected integer (got "abc")',
    '- port (SANDFLEET_PORT): Expected integer (got "x")',
    '- runners/0 (--runners): Expected string to match \'^https?://\' (got "ftp://x")'
  ])
})

test("a value set in code and out of range names the key's flag", () => {
  assert.throws(
    () => loadGatewayConfig({ env: {}, values: { maxAttempts: 0 } }),
    /maxAttempts \(--max-attempts\): Expected integer to be greater or equal to 1 \(got 0\)/
  )
})

test('config: runnerSecret from SANDFLEET_RUNNER_SECRET; one shorter than 16 characters is refused without printing it', () => {
  assert.equal(
    loadGatewayConfig({ env: { SANDFLEET_RUNNER_SECRET: 'fleet-secret-0123456789' } }).runnerSecret,
    'fleet-secret-0123456789'
  )
  assert.equal(loadGatewayConfig({ env: {} }).runnerSecret, '')
  assert.throws(
    () => loadGatewayConfig({ env: { SANDFLEET_RUNNER_SECRET: 'tiny-secret' } }),
    (err: Error) =>
      err.message.includes('runnerSecret (SANDFLEET_RUNNER_SECRET)') &&
      err.message.includes('11 characters') &&
      !err.message.includes('tiny-secret')
  )
})

test('the bind rule: without API keys only a loopback host, unless allowUnauthenticated; the error names the fields', () => {
  for (const host of ['127.0.0.1', 'localhost', '::1', '127.0.0.2'])
    assert.equal(loadGatewayConfig({ env: {}, values: { host } }).host, host)
  assert.throws(
    () => loadGatewayConfig({ env: {}, values: { host: '0.0.0.0' } }),
    (err: Error & { code?: string }) =>
      err.code === 'SF_ERR_GATEWAY_CONFIG' &&
      err.message.includes('host (--host): "0.0.0.0" is not a loopback address and no API key is configured') &&
      err.message.includes('apiKeysFile (--api-keys-file, SANDFLEET_API_KEYS_FILE)') &&
      err.message.includes('allowUnauthenticated (--allow-unauthenticated')
  )
  assert.throws(
    () => loadGatewayConfig({ env: { SANDFLEET_HOST: '::' } }),
    /host \(SANDFLEET_HOST\): "::" is not a loopback address/
  )
  assert.equal(
    loadGatewayConfig({ env: { SANDFLEET_ALLOW_UNAUTHENTICATED: 'true' }, values: { host: '0.0.0.0' } })
      .allowUnauthenticated,
    true
  )
  assert.equal(loadGatewayConfig({ env: {}, values: { host: '0.0.0.0', allowUnauthenticated: true } }).host, '0.0.0.0')
  assert.deepEqual(
    loadGatewayConfig({ env: { SANDFLEET_API_KEYS: 'key-one-123' }, values: { host: '0.0.0.0' } }).apiKeys,
    ['key-one-123']
  )
  assert.equal(
    loadGatewayConfig({ env: { SANDFLEET_API_KEYS_FILE: '/run/secrets/keys' }, values: { host: '10.0.0.5' } })
      .apiKeysFile,
    '/run/secrets/keys'
  )
  assert.throws(
    () => loadGatewayConfig({ env: { SANDFLEET_ALLOW_UNAUTHENTICATED: 'maybe' } }),
    /allowUnauthenticated \(SANDFLEET_ALLOW_UNAUTHENTICATED\): Expected boolean/
  )
})

test('config: an API key too short is refused without printing it', () => {
  assert.throws(
    () => loadGatewayConfig({ env: { SANDFLEET_API_KEYS: 'tiny-k,long-enough-key' } }),
    (err: Error) =>
      err.message.includes('apiKeys/0 (SANDFLEET_API_KEYS)') &&
      err.message.includes('a key of 6 characters') &&
      !err.message.includes('tiny-k')
  )
})

test("config: arrays the caller passed in are copied, not frozen; the config's own are frozen", () => {
  const runners = ['http://127.0.0.1:8081']
  const apiKeys = ['key-aaaaaaaa']
  const config = loadGatewayConfig({ env: {}, values: { runners, apiKeys } })
  assert.equal(Object.isFrozen(runners), false)
  assert.equal(Object.isFrozen(apiKeys), false)
  runners.push('http://127.0.0.1:8082')
  assert.deepEqual(config.runners, ['http://127.0.0.1:8081'], "the config does not change with the caller's array")
  assert.equal(Object.isFrozen(config.runners), true)
  assert.equal(Object.isFrozen(config.apiKeys), true)
})
