import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { main, timeStart } from '../src/start-ab.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

test('start-ab refuses fewer than two NAME=CHECKOUT builds, or a malformed one, before starting anything', async () => {
  assert.equal(await main([], {}), 2)
  assert.equal(await main(['only=/tmp'], {}), 2)
  assert.equal(await main(['a=/tmp@bad', 'b=/tmp'], {}), 2)
})

test('start-ab times a real sandfleet serve from spawn to ready, and stops it', async () => {
  const ms = await timeStart(ROOT, {}, ['--backend', 'process', '--pool-size', '1'], 18_791)
  assert.ok(ms > 50 && ms < 120_000, `${ms} ms`)
  // Stopped: the port is free again.
  await assert.rejects(fetch('http://127.0.0.1:18791/readyz'))
})

test('a serve that cannot start is an error naming its checkout, not a hang', async () => {
  await assert.rejects(
    timeStart(ROOT, {}, ['--backend', 'no-such-backend'], 18_792),
    /sandfleet serve from .* did not become ready/
  )
})
