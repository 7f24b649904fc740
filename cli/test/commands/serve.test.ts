import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseCommandLine } from '@sandfleet/command-line'
import { SERVE_COMMAND, splitServeValues } from '../../src/commands/serve.ts'

const split = (argv: string[]): ReturnType<typeof splitServeValues> =>
  splitServeValues(parseCommandLine(SERVE_COMMAND, argv).values)

test('serve gives --host and --port to the gateway, every runner setting to the runner', () => {
  assert.deepEqual(split(['--port', '9000', '--backend', 'process', '--host=127.0.0.1', '--pool-size', '4']), {
    gateway: { port: '9000', host: '127.0.0.1' },
    runner: { backend: 'process', poolSize: '4' }
  })
})

test("serve gives --queue-timeout-ms to both (the gateway's budget for a call and the runner's cap), and a gateway-only setting to the gateway", () => {
  assert.deepEqual(split(['--queue-timeout-ms', '500', '--pool-size=2', '--max-in-flight=64']), {
    gateway: { queueTimeoutMs: '500', maxInFlight: '64' },
    runner: { queueTimeoutMs: '500', poolSize: '2' }
  })
})

test("serve gives --log-level to both: the one logger of both halves is made from the gateway's config", () => {
  assert.deepEqual(split(['--log-level', 'warn', '--backend=process']), {
    gateway: { logLevel: 'warn' },
    runner: { logLevel: 'warn', backend: 'process' }
  })
})

test("serve gives the request limits to both: one --max-body-bytes and one --max-code-bytes, the gateway's edge and the runner", () => {
  assert.deepEqual(split(['--max-body-bytes', '2048', '--max-code-bytes=100']), {
    gateway: { maxBodyBytes: '2048', maxCodeBytes: '100' },
    runner: { maxBodyBytes: '2048', maxCodeBytes: '100' }
  })
  assert.throws(() => parseCommandLine(SERVE_COMMAND, ['--max-code-chars', '100']), /--max-code-chars: unknown flag/)
})

test('serve refuses a flag neither half knows, naming it', () => {
  assert.throws(() => parseCommandLine(SERVE_COMMAND, ['--pool-sise', '4']), /--pool-sise: unknown flag/)
})
