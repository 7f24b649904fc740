import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildRunnerApp } from '../src/app.ts'
import { bearerCheck } from '../src/auth.ts'
import { parseRunnerConfig, runnerConfig } from '../src/config.ts'
import { Runner } from '../src/runner/runner.ts'
import { ScriptedDriver } from './helpers/scripted-driver.ts'

const SECRET = 'fleet-secret-0123456789'

test('auth: bearerCheck takes the exact secret only', () => {
  const check = bearerCheck(SECRET)
  assert.equal(check(`Bearer ${SECRET}`), true)
  assert.equal(check(`bearer ${SECRET}`), true)
  for (const bad of [
    undefined,
    '',
    'Bearer ',
    SECRET,
    `Bearer ${SECRET}x`,
    `Bearer ${SECRET.slice(0, -1)}`,
    `Basic ${SECRET}`,
    [`Bearer ${SECRET}`]
  ]) {
    assert.equal(check(bad), false, `accepted ${JSON.stringify(bad)}`)
  }
})

test('auth: with runnerSecret set, a call without it (or with another) is refused 401 and nothing runs; the probes stay open', async () => {
  const driver = new ScriptedDriver()
  const runner = new Runner(runnerConfig({ id: 'r-auth', poolSize: 1, languages: ['python'], runnerSecret: SECRET }), {
    driver
  })
  await runner.start()
  const app = buildRunnerApp(runner)
  try {
    for (const authorization of [undefined, 'Bearer not-the-fleet-secret', `Bearer ${SECRET} `]) {
      const headers = authorization === undefined ? {} : { authorization }
      const res = await app.inject({ method: 'POST', url: '/v1/execute', payload: { code: 'echo hello' }, headers })
      assert.equal(res.statusCode, 401, `status for ${String(authorization)}`)
      assert.equal(res.json().error.code, 'SF_ERR_RUNNER_UNAUTHORIZED')
      assert.equal(res.json().status, 'infra_error')
      for (const url of ['/v1/runner/load', '/v1/info', '/metrics', '/v1/sessions']) {
        assert.equal((await app.inject({ method: 'GET', url, headers })).statusCode, 401, url)
      }
    }
    assert.equal(runner.poolStats()[0].jobs, 0, 'a refused call ran')
    const ok = await app.inject({
      method: 'POST',
      url: '/v1/execute',
      payload: { code: 'echo hello' },
      headers: { authorization: `Bearer ${SECRET}` }
    })
    assert.equal(ok.statusCode, 200)
    assert.equal(ok.json().stdout, 'hello\n')
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    assert.equal((await app.inject({ method: 'GET', url: '/readyz?x=1' })).statusCode, 200)
  } finally {
    await app.close()
    await runner.close()
  }
})

test('auth: a runnerSecret shorter than 16 characters is a config error that does not print it', () => {
  assert.throws(
    () => parseRunnerConfig({ env: { SANDFLEET_RUNNER_SECRET: 'short-secret' } }),
    (err: Error) =>
      /runnerSecret \(SANDFLEET_RUNNER_SECRET\): must be at least 16 characters \(got 12\)/.test(err.message) &&
      !err.message.includes('short-secret')
  )
  assert.equal(parseRunnerConfig({ argv: ['--runner-secret', SECRET] }).runnerSecret, SECRET)
})
