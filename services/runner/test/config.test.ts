import { test } from 'node:test'
import { availableParallelism } from 'node:os'
import assert from 'node:assert/strict'
import { parseRunnerConfig, readRunnerConfig, runnerConfig } from '../src/config.ts'
import { ConfigError } from '../src/errors.ts'
import { LIMITS, NO_CALL_CONTEXT } from '@sandfleet/protocol'

test('config: defaults, then env, then flags; frozen', () => {
  const c = parseRunnerConfig({
    argv: ['--pool-size', '3', '--queue-timeout-ms=500'],
    env: { SANDFLEET_POOL_SIZE: '9', SANDFLEET_PORT: '9001', SANDFLEET_GATEWAY_THING: 'ignored' }
  })
  assert.equal(c.poolSize, 3)
  assert.equal(c.queueTimeoutMs, 500)
  assert.equal(c.port, 9001)
  assert.equal(c.backend, 'auto')
  assert.ok(Object.isFrozen(c))
})

test('config: a bad config lists every problem in one error', () => {
  try {
    parseRunnerConfig({
      argv: ['--pool-size', 'x', '--bogus', '1', '--backend', 'vm'],
      env: { SANDFLEET_MAX_TIMEOUT_MS: '-4' }
    })
    assert.fail('should throw')
  } catch (err) {
    assert.ok(err instanceof ConfigError)
    assert.equal(err.code, 'SF_ERR_RUNNER_CONFIG')
    const text = err.problems.join('\n')
    for (const word of ['poolSize', '--bogus', 'backend', 'maxTimeoutMs']) assert.match(text, new RegExp(word))
  }
})

test('config: unknown keys in code are refused; unknown flags can be passed through', () => {
  assert.throws(() => runnerConfig({ nope: 1 } as never), /unknown key "nope"/)
  const { config, rest } = readRunnerConfig({ argv: ['--runners', 'a,b', '--pool-size', '2'], allowUnknownFlags: true })
  assert.equal(config.poolSize, 2)
  assert.deepEqual(rest, ['--runners', 'a,b'])
})

test('config: the default pool is twice the cores (measured in benchmarks/RESULTS.md, pool size)', () => {
  assert.equal(runnerConfig().poolSize, 2 * availableParallelism())
})

test('config: a value outside a set of choices is answered with the choices', () => {
  assert.throws(
    () => parseRunnerConfig({ argv: ['--docker-channel', 'pipe', '--languages', 'python,cobol'] }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError)
      assert.deepEqual(err.problems, [
        'languages (--languages): must be one of python, javascript (got "cobol")',
        'dockerChannel (--docker-channel): must be one of auto, socket, attach (got "pipe")'
      ])
      return true
    }
  )
})

test("isolation: fork by default; a call's level applies unless the runner forbids reuse; reuse cannot be the default where it is forbidden", async () => {
  const { prepareCall } = await import('../src/requests/prepared-call.ts')
  const served = new Map()
  const level = (config: ReturnType<typeof runnerConfig>, isolation?: 'fork' | 'reuse'): string | undefined =>
    prepareCall({ code: 'x', ...(isolation === undefined ? {} : { isolation }) }, NO_CALL_CONTEXT, config, served).job
      ?.request.isolation
  assert.equal(level(runnerConfig()), 'fork')
  assert.equal(level(runnerConfig(), 'reuse'), 'reuse')
  assert.equal(level(runnerConfig({ isolation: 'reuse' })), 'reuse')
  assert.equal(level(runnerConfig({ isolation: 'reuse' }), 'fork'), 'fork')
  assert.equal(level(runnerConfig({ allowReuse: false }), 'reuse'), 'fork')
  assert.throws(
    () => runnerConfig({ isolation: 'reuse', allowReuse: false }),
    /isolation \(overrides\): reuse, but allowReuse is false/
  )
})

test("timeout_ms: a call that gives none runs with the contract's default within the runner's maxTimeoutMs", async () => {
  const { prepareCall } = await import('../src/requests/prepared-call.ts')
  const timeout = (config: ReturnType<typeof runnerConfig>, timeoutMs?: number): number | undefined =>
    prepareCall(
      { code: 'x', ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) },
      NO_CALL_CONTEXT,
      config,
      new Map()
    ).job?.request.timeout_ms
  assert.equal(timeout(runnerConfig()), LIMITS.defaultTimeoutMs)
  assert.equal(timeout(runnerConfig({ maxTimeoutMs: 2000 })), 2000)
  assert.equal(timeout(runnerConfig({ maxTimeoutMs: 2000 }), 1500), 1500)
  assert.equal(
    prepareCall({ code: 'x', timeout_ms: 2001 }, NO_CALL_CONTEXT, runnerConfig({ maxTimeoutMs: 2000 }), new Map())
      .problem?.field,
    'timeout_ms'
  )
})
