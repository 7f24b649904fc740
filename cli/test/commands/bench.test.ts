import { test } from 'node:test'
import assert from 'node:assert/strict'
import { invokedAs } from '../../src/commands/bench.ts'

test("bench tells the harness how it was started, for the report's command line", () => {
  assert.equal(invokedAs('/repo/bin/sandfleet.mjs', '/repo'), 'node bin/sandfleet.mjs bench')
  assert.equal(invokedAs('/usr/local/bin/sandfleet', '/home/u'), 'sandfleet bench', 'the command on the PATH')
  assert.equal(
    invokedAs('/repo/bin/sandfleet.mjs', '/elsewhere'),
    'node /repo/bin/sandfleet.mjs bench',
    'a path out of here stays absolute'
  )
})
