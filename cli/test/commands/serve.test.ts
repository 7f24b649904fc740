import { test } from 'node:test'
import assert from 'node:assert/strict'
import { splitServeFlags } from '../../src/commands/serve.ts'

test('serve gives --host and --port to the gateway, every other flag to the runner', () => {
  assert.deepEqual(splitServeFlags(['--port', '9000', '--backend', 'process', '--host=127.0.0.1', '--pool-size', '4']), {
    gatewayArgs: ['--port', '9000', '--host=127.0.0.1'],
    runnerArgs: ['--backend', 'process', '--pool-size', '4']
  })
})

test('serve gives --queue-timeout-ms to both: the gateway\'s budget for a call and the runner\'s cap', () => {
  assert.deepEqual(splitServeFlags(['--queue-timeout-ms', '500', '--pool-size=2', '--queue-timeout-ms=700']), {
    gatewayArgs: ['--queue-timeout-ms', '500', '--queue-timeout-ms=700'],
    runnerArgs: ['--queue-timeout-ms', '500', '--pool-size=2', '--queue-timeout-ms=700']
  })
})

test('serve gives --log-level to both: the one logger of both halves is made from the gateway\'s config', () => {
  assert.deepEqual(splitServeFlags(['--log-level', 'warn', '--backend=process']), {
    gatewayArgs: ['--log-level', 'warn'],
    runnerArgs: ['--log-level', 'warn', '--backend=process']
  })
})
