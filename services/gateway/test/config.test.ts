import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadGatewayConfig } from '../src/config.ts'
import { GatewayError } from '../src/errors.ts'

test('defaults, then SANDFLEET_* variables, then flags: the later source wins, text becomes the schema\'s type', () => {
  assert.equal(loadGatewayConfig({ env: {} }).maxInFlight, 0, 'no count bound by default: admission is sized by memory')
  const config = loadGatewayConfig({
    env: { SANDFLEET_MAX_IN_FLIGHT: '64', SANDFLEET_RUNNERS: 'http://10.0.0.5:8081, http://10.0.0.6:8081', SANDFLEET_PORT: '9000' },
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
  } catch (e) { error = e }
  assert.ok(error instanceof GatewayError)
  assert.equal(error.code, 'SF_ERR_GATEWAY_CONFIG')
  const lines = error.message.split('\n').slice(1).map((l) => l.trim())
  assert.deepEqual(lines.sort(), [
    '- --bogus: unknown flag',
    '- maxInFlight (--max-in-flight): Expected integer (got "abc")',
    '- port (SANDFLEET_PORT): Expected integer (got "x")',
    '- runners/0 (--runners): Expected string to match \'^https?://\' (got "ftp://x")'
  ])
})

test('a value set in code and out of range names the key\'s flag', () => {
  assert.throws(() => loadGatewayConfig({ env: {}, values: { maxAttempts: 0 } }), /maxAttempts \(--max-attempts\): Expected integer to be greater or equal to 1 \(got 0\)/)
})

test('config: runnerSecret from SANDFLEET_RUNNER_SECRET; one shorter than 16 characters is refused without printing it', () => {
  assert.equal(loadGatewayConfig({ env: { SANDFLEET_RUNNER_SECRET: 'fleet-secret-0123456789' } }).runnerSecret, 'fleet-secret-0123456789')
  assert.equal(loadGatewayConfig({ env: {} }).runnerSecret, '')
  assert.throws(() => loadGatewayConfig({ env: { SANDFLEET_RUNNER_SECRET: 'tiny-secret' } }), (err: Error) =>
    err.message.includes('runnerSecret (SANDFLEET_RUNNER_SECRET)') && err.message.includes('11 characters') && !err.message.includes('tiny-secret'))
})
