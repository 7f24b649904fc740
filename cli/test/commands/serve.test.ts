import { test } from 'node:test'
import assert from 'node:assert/strict'
import { splitListenFlags } from '../../src/commands/serve.ts'

test('serve gives --host and --port to the gateway, every other flag to the runner', () => {
  assert.deepEqual(splitListenFlags(['--port', '9000', '--backend', 'process', '--host=127.0.0.1', '--pool-size', '4']), {
    gatewayArgs: ['--port', '9000', '--host=127.0.0.1'],
    runnerArgs: ['--backend', 'process', '--pool-size', '4']
  })
})
