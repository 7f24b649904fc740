/**
 * A caller that goes away (the gateway gave up at its deadline, a client hung up) takes its
 * waiting jobs with it: they leave the queue and never run, for /v1/execute and for a streamed
 * batch; a caller that stays gets every answer.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { buildRunnerApp } from '../src/app.ts'
import { Runner } from '../src/runner/runner.ts'
import { runnerConfig } from '../src/config.ts'
import { ScriptedDriver } from './helpers/scripted-driver.ts'

async function withRunner(fn: (url: string, runner: Runner) => Promise<void>): Promise<void> {
  const runner = new Runner(runnerConfig({ id: 'r-abort', poolSize: 1, languages: ['python'] }), {
    driver: new ScriptedDriver()
  })
  await runner.start()
  const app = buildRunnerApp(runner)
  try {
    await fn(await app.listen({ host: '127.0.0.1', port: 0 }), runner)
  } finally {
    await app.close()
    await runner.close()
  }
}

const json = { 'content-type': 'application/json' }

test('a /v1/execute call whose caller went away leaves the queue and never runs', async () => {
  await withRunner(async (url, runner) => {
    const busy = fetch(`${url}/v1/execute`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: 'sleep 400' })
    })
    while (runner.poolStats()[0].busy === 0) await sleep(10)
    const gone = new AbortController()
    const abandoned = fetch(`${url}/v1/execute`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ code: 'sleep 400' }),
      signal: gone.signal
    }).catch(() => 'aborted')
    while (runner.poolStats()[0].queued === 0) await sleep(10)
    gone.abort()
    assert.equal(await abandoned, 'aborted')
    await sleep(50)
    assert.equal(runner.poolStats()[0].queued, 0, 'the abandoned job left the queue')
    assert.equal(((await (await busy).json()) as { status: string }).status, 'ok')
    await sleep(100)
    assert.equal(runner.poolStats()[0].jobs, 1, 'the abandoned job never ran')
  })
})

test('a caller that stays gets every answer of a queued streamed batch', async () => {
  await withRunner(async (url) => {
    const res = await fetch(`${url}/v1/execute/batch`, {
      method: 'POST',
      headers: { ...json, accept: 'application/x-ndjson' },
      body: JSON.stringify({ requests: [{ code: 'sleep 100' }, { code: 'echo a' }, { code: 'echo b' }] })
    })
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    assert.deepEqual(
      lines.map((l) => l.result.status),
      ['ok', 'ok', 'ok']
    )
  })
})
